"""The offline reviewer's word lists (SPEC R6, R8): data only, no logic.

Everything the rules of :mod:`.statements` and :mod:`.wording` know about English lives here,
as plain lists of words and phrases, so that extending what the reviewer understands means
adding a word to a list, not writing a new rule. Phrases are lower case; a phrase list is
matched as whole words, case-blind (:func:`phrases`). The few regular expressions here are
shapes of tokens (a version, a time, a port), not of sentences.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["phrase_list", "phrases", "words"]


def words(text: str) -> frozenset[str]:
    """A set of words from a blank-separated string."""
    return frozenset(text.split())


def phrase_list(text: str) -> tuple[str, ...]:
    """Phrases separated by ``|`` (and line breaks): ``"by the way | fyi | heads up"``."""
    return tuple(p.strip() for p in text.replace("\n", "|").split("|") if p.strip())


def phrases(items: Iterable[str]) -> re.Pattern[str]:
    """One case-blind pattern matching any of ``items`` as whole words (longest first)."""
    ordered = sorted({i.strip() for i in items if i.strip()}, key=len, reverse=True)
    body = "|".join(re.escape(i).replace(r"\ ", r"\s+") for i in ordered)
    return re.compile(rf"(?<![\w'])(?:{body})(?![\w'])", re.I)


# --- discourse: what a sentence opens or closes with, and carries no fact -------------------

#: Greetings, in the languages people greet in even when they write English ("Hola,
#: Esperanza Ruiz", "Now then. Keith Barraclough, ..."): said to open, they say nothing.
GREETINGS = phrase_list(
    """
    hi | hey | hello | hiya | howdy | hey there | hi there | hello there | morning
    good morning | afternoon | good afternoon | evening | good evening | hola | ciao | bonjour
    hallo | hei | hej | salut
    olá | namaste | salaam | salam | shalom | servus | moin | g'day | now then | buongiorno
    """
)
#: Openers dropped before reading ("Heads up, ...", "Quick one for the record: ...").
LEADS = GREETINGS + phrase_list(
    """
    well | right | wait | so | no | yes | ok | okay | also | oh | ah | yeah | yep | hmm | um
    and | but | anyway | anyways | actually | btw | by the way | fyi | just fyi
    for context | for the record | just so you know | just for the record | for your info
    thanks | thank you | thx | cheers | great | cool | nice | perfect | awesome | got it
    sounds good | sure | alright | all right | one more thing | oh and | and also | ps
    again | as i said | like i said | as mentioned | big news | good news | bad news | news
    sad news
    quick note | quick one | quick one for the record | reminder | heads up | heads-up
    update | quick update | small update | psa | context | info
    status | seriously | honestly | between us | just you and me now
    change of plans | close | phew | important | note | tip | gotcha
    careful | watch out | warning | known issue | new contract terms | refund policy change
    listen | new thing | the new thing | another thing | one more thing | next thing
    incidentally | other news | in other news
    remember | remember that | note that | keep in mind | keep in mind that | don't forget
    don't forget that | bear in mind | just so you have it | by the way
    write this down | write that down | note this down | note this | jot this down
    for my notes | for the notes | put this down | remember this
    bless him | bless her | bless them | sadly | unfortunately
    """
)
#: Leads of praise that may be the first word of a name ("Great Taste Awards", "Perfect
#: Pitch Studios"): written capitalised before a capital with no stop, they are kept.
PRAISE_LEADS = words("Great Cool Nice Perfect Awesome")
#: Openers dropped even before a lower-case word ("and we agreed ..."): they never change
#: what follows (unlike "no" or "update", which may be part of it).
FILLERS = words(
    "and but also so oh ok okay yeah actually btw fyi anyway anyways again honestly seriously "
    "plus alright ps hey hi"
)
#: Cues that what follows is worth keeping ("remember that the sandbox only accepts test
#: cards"): dropped, with what follows read as a statement.
CUES = phrase_list(
    """
    remember that | remember | note that | keep in mind that | keep in mind
    don't forget that | do not forget that | bear in mind that | bear in mind
    just remember | please remember | please note | please note that | for the record
    one thing I want kept | one thing I do want kept | one thing to keep
    """
)
#: Asking the agent to keep what follows ("could you note the volunteer rota: ...", "can you
#: remember that Dana books the toilets?"): a request that names no task but keeping, so the
#: request goes and what follows is read as a statement, even under a question mark.
KEEP_VERBS = phrase_list(
    """
    remember | note | note down | make a note | make a note of | jot down | write down
    log | keep a note | keep a note of
    """
)
#: Asking to put what follows somewhere ("could you put in my diary: ..."): only with the place.
PUT_VERBS = words("put add pop")
#: Where the agent is asked to keep it.
KEEP_PLACES = words("diary calendar notes list records file")
#: Openers that aim what follows at the future: "from now on, answer in French" is a rule.
FORWARD = ("from now on", "going forward", "in future", "in the future", "next time")
#: Closers dropped after reading ("..., though", "..., lol").
TRAILERS = phrase_list(
    """
    lol | haha | hahaha | thanks | thank you | thx | btw | by the way | though | fyi
    cheers | please | pls | finally | for the record | in case you need it
    just so you know
    """
)

# --- what is never a fact -----------------------------------------------------------------

#: Openers of a question without its "?" ("can you check the backup", "what time does it
#: open"): a question word with the verb that makes it one.
QUESTION_OPENERS = (
    "can you",
    "could you",
    "would you",
    "will you",
    "do you",
    "did you",
    "do we",
    "did we",
    "does anyone",
    "does it",
    "does this",
    "are you",
    "are we",
    "are there",
    "is there",
    "is it",
    "is this",
    "have you",
    "has anyone",
    "anyone know",
    "anybody know",
    "any idea",
    "should i",
    "should we",
    "shall i",
    "shall we",
    "wondering",
    "i wonder",
    "what's",
    "how's",
    "where's",
    "who's",
    "whats",
    *(
        f"{w} {aux}"
        for w in ("what", "how", "where", "who", "which", "why", "when")
        for aux in sorted(
            words("is are was were do does did can should would will much many long often of one")
        )
    ),
)
#: Openers of a request to the assistant (imperatives and polite forms).
REQUESTS = phrase_list(
    """
    please | pls | plz | kindly | can you | could you | would you | will you | i want you to
    i'd like you to | i would like you to | i need you to | let me know | tell me | show me
    remind me | help me | give me | send me | find me | get me | walk me | let's see
    make me | write me
    """
)
#: Verbs that open an imperative: a request or a rule, never a fact.
IMPERATIVES = words(
    "always never don't dont stop avoid answer reply respond write speak talk use format sign "
    "address refer keep include add put show give list send mention translate ask ping notify "
    "cite be stay skip act pretend explain summarise summarize draft pull check find look "
    "remind help make tell let call email text book schedule cancel remove delete update "
    "fix run try get bring buy order note remember forget open close move copy paste "
    "compare review read print share start finish sort search fetch grab round quote convert"
)
#: What the user does with their own hands, in their own work: a rule with one of these
#: ("always check the nets are pegged", "never spray Primo when it's hot") is how they work,
#: a fact to keep, not an order to the agent, which writes, answers and reminds.
PRACTICE_VERBS = words(
    "check clean spray accept untick tick lock unlock charge store wash inspect test drain "
    "bleed oil grease wear carry fill empty water feed park wipe label unplug plug cover tie "
    "peg service fit tighten loosen warm defrost shut leave lift load unload stack sign-out "
    "sweep mop dry air ventilate seal tape strap clip rinse soak sharpen calibrate weigh "
    "measure count fire launch ride drive climb cycle"
)
#: A rule aimed at the agent when it appears anywhere: "you should", "when you ...".
RULE_MARKERS = phrase_list(
    """
    you should | you must | you need to | you have to | you'll need to | you will need to
    you are to | you're to | you may not | you can't | you cannot | you shouldn't
    you mustn't | you ought to | you are not allowed | you aren't allowed
    you're not allowed | when you | whenever you | if you | your answers | your replies
    your responses | your tone | your messages | your output | your style | your suggestions
    reply to me | answer me | talk to me | write to me | from now on, always
    from now on, never | don't ever | never suggest | always reply
    no need say | no need to say | no need to apologise | no need to apologize
    don't apologise | don't apologize | stop apologising | stop apologizing
    """
)
SMALL_TALK = GREETINGS + phrase_list(
    """
    thanks | thank you | thx | ty | cheers | bye | good night | goodnight
    see you | see ya | ok | okay | cool | great | nice | awesome | perfect | sounds good
    got it | sure | no problem | np | you're welcome | lol | haha | wow | yes | no | yep
    nope | done | ack | noted | how are you | how's it going | welcome back | good morning
    good afternoon | good evening | morning | ugh | phew | talk later | talk tomorrow
    gotta run | gotta go | what a morning | what a day | makes sense
    that makes sense | good call | all good | no worries | anyway | anyhow | anyways
    enough about me | hows your day | how's your day | how is your day | hows your day going
    how's your day going | how is your day going | hows your weekend | how's your weekend
    how was your weekend | how's things | hows things | how are things | what's new with you
    whats new with you | hows you | how're you
    """
)
#: Talk of the weather ("raining again", "24 degrees today"): small talk when said of a moment
#: (:data:`WEATHER_MOMENT`), not when something depends on it ("we close when it rains").
WEATHER = phrase_list(
    """
    weather | rain | raining | rained | rainy | snow | snowing | snowed | sunny | sunshine
    degrees | drizzle | drizzly | fog | foggy | freezing | roasting | scorching | heatwave
    windy | cloudy | pouring | grey day | cold one | hot one | sun | lovely day | gorgeous day
    glorious | lashing it down | chucking it down | bucketing down | raining sideways | gale
    frost | frosty | muggy | like spring | like summer | like winter | the heat
    """
)
WEATHER_MOMENT = phrase_list(
    """
    today | tonight | this morning | this afternoon | this evening | this weekend | yesterday
    all week | all day | again | as always | like always | as usual | out there | so nice
    here | for once | nothing but | lately | in weeks | in ages | of the year | btw | by the way
    finally out | unreal
    """
)
#: How a body is after work ("my feet are killing me", "my fingers are numb"): small talk.
BODY_PARTS = words("feet legs back arms forearms hands fingers shoulders knees neck eyes")
WORN = words("killing wrecked dead sore aching achy hurt hurts hurting numb knackered destroyed")
#: How a person is after work ("the lads are knackered", "I'm shattered"): small talk.
TIRED = words("knackered shattered exhausted")
#: Asides about the speaker's day or a match: small talk wherever they are in a sentence.
ASIDES = phrase_list(
    """
    lost again | won again | just back from | just got back from | off to bed
    been up since | would kill me | will kill me | gonna kill me | going to kill me
    on hold with | on hold to | across the keyboard | first tooth | walked the dog
    """
)
#: An offer of help ("What can I help with?"): a reply to it says what the speaker wants
#: help with, a request, not an answer that states a fact.
HELP_OFFERS = phrase_list(
    """
    can i help | could i help | may i help | can i do for you | could i do for you
    help you with | i can help with | need help with | anything else
    like help with | want help with | like a hand with | want a hand with
    """
)
#: Words by which a sentence reacts to what the other person said, rather than state a fact.
#: They count anywhere in a sentence.
REACTIONS = phrase_list(
    """
    looks great | looks amazing | looks awesome | looks lovely
    looks adorable | congrats | congratulations | so happy for | happy for you
    proud of you | i hope | hope you | hope it | hope the | i bet | good luck | well done
    take care | keep it up | keep up the good work | that's great | that's awesome
    that's amazing | that's so cool | that's cool | that's wonderful | that's lovely
    that's tough | that's hard | so cool | so sweet | so cute | how exciting | i'm sorry
    no wonder | can't wait | cannot wait | you're right | you are right
    you too | good riddance | drinks on me
    """
)
#: Guesses about the other person's life ("that must be fun", "Max must have loved it"):
#: reactions when said of a pronoun or a name, not of a thing ("the filter must be clean").
GUESSES = ("must be", "must have", "must've", "must feel", "must get")
#: Openers of a reaction ("What a lovely title", "Welcome, Ben").
REACTION_OPENERS = phrase_list(
    """
    what a | welcome | glad | so glad | thanks for | thank you for | good to know
    nice to meet | great to meet | lovely to meet | sounds | exciting | appreciate | enjoy
    haha | aww | oh man | wow | ha | yay | nice work | nice one | great job | big change
    sensible | makes sense | understood | noted | got it | sure | of course | no problem
    sorry | hello | hi | good morning | funny thing is | the funny thing is | funnily enough
    """
)
#: Progress and the moment: true now, stale in an hour.
TRANSIENT = phrase_list(
    """
    one sec | one second | a sec | one moment | just a sec | just a second | just a minute
    just a moment | brb | be right back | hang on | hold on | give me a sec
    give me a second | give me a minute | bear with me | back after | ok back
    okay back | i'm back | still compiling | still building | still running | still loading
    still working | still thinking | in progress | almost done | nearly done
    halfway there | so far | as we speak | let me check | let me look | let me see | let me try
    let me think | let me run | let me grab | let me find | let me dig | let me quickly
    i'll check | i'll look | i'll get back | i'll try | i'll run | i'll ping | i'll be back
    done for tonight | done for today | done with | slow going
    at the moment | right now | again today | again this morning | needs a restart
    needs a reboot | needs a look
    nearly finished | almost finished | just finished | wrapping up | on my way | running late
    min late | mins late | minutes late | hour late | hours late | to go until | left to go
    still to do | yet to do | still waiting on | still waiting for | just waiting on
    just waiting for
    """
)
#: How far through a task someone is: progress, unless what they are through is a named work
#: of theirs ("halfway through my fourth novel, The Salt Ledger" says what they work on).
PROGRESS_THROUGH = phrase_list(
    """
    halfway through | half way through | halfway down | half way down | of the way through
    halfway thru | half way thru | halfway with | half way with | halfway into
    most of the way | partway through
    part way through | nearly through | almost through | thirds through | third through
    quarters through | quarter through | percent through | per cent through
    of the way up | of the way down | of the way round | of the way along | of the way across
    """
)
#: Activities of a moment: "I'm running the tests" is progress; "I'm learning German" is not.
MOMENTARY = words(
    "running compiling building deploying restarting rebooting testing checking looking trying "
    "installing downloading uploading waiting debugging fixing reviewing rerunning pushing "
    "pulling grabbing heading sending leaving packing stepping typing "
    "reading eating cooking driving walking pasting copying drafting finishing starting "
    "wrapping preparing merging rolling syncing indexing"
)
#: Relative time that makes a present-tense statement about the moment only.
MOMENT = phrase_list(
    """
    today | tonight | this morning | this afternoon | this evening | right now
    at the moment | for now | for the moment | currently
    """
)
#: The day a thing happened on, said relative to now: with no change in it ("covered in soot
#: today", "saw the first oystercatchers this morning"), the day's news, not a fact to keep.
EPISODE = phrase_list(
    """
    today | tonight | this morning | this afternoon | this evening | last night | yesterday
    """
)
#: Verbs that say something changed for good, news of a day or not ("we hired Ama today"),
#: beside the switch and retire verbs below.
CHANGE_VERBS = phrase_list(
    """
    bought | hired | joined | started | starts | signed | booked | ordered | got | opened
    fired | won | lost | passed | became | married | engaged | born | died | adopted
    installed | replaced | upgraded | renamed | promoted | appointed | elected | raised
    lowered | agreed | decided | left | arrived | delivered | confirmed | accepted | approved
    set up | launched
    """
)
#: Subjects whose state is about one run of something ("the build is green").
TRANSIENT_SUBJECTS = words(
    "build builds test tests job jobs download upload install compile ci run runs script command "
    "query import export backup pr coffee lunch meeting call deploy deployment pipeline suite "
    "rollout ticket tickets essay standup"
)
HEDGES = phrase_list(
    """
    i know | i feel | i appreciate | i agree | i understand | i wish | i mean | i hope
    i bet | maybe | perhaps | might | possibly | what if | not sure | unsure | probably
    considering | thinking about | thinking of | wondering | i guess | i wonder | i think
    i believe | i suppose | we could | should we | hypothetically | in theory | or not
    let's see | at some point | some day | someday | if i ever win | if we ever | if i won
    if we won | if i win | if we win | i'd love | we'd love | i would love | we would love
    a dream for now | pipe dream
    """
)
#: How someone feels at the moment ("I'm so excited", "John is determined"): not a fact to
#: keep, unlike what they like or who they are.
FEELINGS = words(
    "excited determined happy glad thrilled sad stressed nervous proud grateful thankful sorry "
    "pumped stoked bummed upset worried anxious tired exhausted relieved curious eager keen "
    "motivated inspired amazed blessed lucky overwhelmed frustrated disappointed touched "
    "honored honoured delighted psyched jealous scared afraid bored glad sick annoyed gutted "
    "furious livid fuming knackered shattered chuffed"
)
#: An obligation of the speaker: a to-do, not a fact ("we need to fix the login bug").
TODO = phrase_list(
    """
    need to | needs to | have to | has to | got to | gotta | going to have to | should
    must | ought to
    """
)
SECRET_NOUNS = phrase_list(
    """
    password | passwords | passwd | passcode | passphrase | pin code | pin number | api key
    api keys | apikey | access key | secret key | secret | secrets | token | tokens
    credential | credentials | private key | ssh key | 2fa code | otp | recovery code
    license key | login | psk | pre-shared key | preshared key | shared key | shared secret
    wifi key | wpa key | encryption key | master key | seed phrase | recovery phrase
    pasword | paswords | passwrod | passowrd | paswd | pword | passwort | passord
    """
)
#: What opens something with digits: told with its digits, it is a secret ("the gate code is
#: 4417", "the safe combination is 3-18-27").
ACCESS_NOUNS = phrase_list(
    """
    code | codes | pin | pins | passcode | combination | combo | keypad | key pad | keysafe
    key safe | key box | keybox | lockbox | lock box | padlock | alarm | safe | gate | door
    entry code | door code | access code | unlock | unlock code | sort code | acc | account no
    account number | card number | iban | cvv | bsb | routing number
    """
)
#: Saying where a secret is kept, or how it is handled, is not the secret.
SECRET_REFERENCES = phrase_list(
    """
    stored in | kept in | lives in | managed in | managed by | saved in
    in the vault | in vault | 1password | bitwarden | lastpass | keychain | keepass
    secrets manager | password manager | in settings | vault | rotate | expire
    expires | expiry | expiration | under
    """
)

# --- what a sentence is about -------------------------------------------------------------

#: Cause and remedy: a lesson is kept whole (never cut between cause and fix).
LESSON_CUES = phrase_list(
    """
    cause | caused | causes | root cause | because | due to | turned out | turns out
    the fix | fixed it | fix is | fix was | fixed by | the solution
    solution was | workaround | the reason | comes from | came from | come from
    means that | happens because | happened because
    problem was | issue was | lesson | lesson learned | lessons learned | takeaway
    til | note to self | prevents it | avoids | found why | found out why | figured out why
    worked out why | sorted it | solved it | fixes it | what worked | what fixed it
    what solved it
    """
)
#: Words that make a sentence hold beyond the case at hand ("a checksum mismatch usually
#: means a proxy"): after tool output, such a sentence is knowledge, not the output said again.
GENERAL_CUES = phrase_list(
    """
    usually | typically | generally | normally | in general | as a rule | tends to | tend to
    almost always | most of the time | nearly always | often means | always means
    """
)
#: Words that open a phrase set before the statement it frames ("With prices going up, we
#: raised the budget"): when the whole is not read as a statement, what follows the comma is.
OPENING_PHRASES = phrase_list(
    """
    with | after | since | given | as of | because of | due to | following | now that
    thanks to | starting | from | in | on | at | for | over | during | ever since | once
    until | till | for now
    """
)
#: Words by which a statement takes back an earlier decision ("changed my mind again: the
#: vicar did it after all"): it replaces the decision it shares a word with.
REVERSAL_CUES = phrase_list(
    """
    changed my mind | changed our minds | change of plan | change of plans | reversed
    reversing | reverse the | scratch that | after all | on second thought
    on second thoughts | back to the | we're back to | going back to | went back to
    """
)
#: Words a sentence opens with when its subject is in the sentence before ("He reports to
#: Marek", "Their main admin is Felix"): it is read together with that sentence.
LEANING_OPENERS = words(
    "he she they his her their its it's him them these those which who he's she's they're "
    "mostly mainly primarily also"
)
#: Phrases a sentence opens with when what it says holds only with the sentence before
#: ("Remakes are free within 90 days. After that we charge half."): read together with it.
LEANING_PHRASES = phrase_list(
    """
    after that | before that | until then | till then | beyond that | past that | otherwise
    in that case | if not | failing that | after which
    has to be | have to be | needs to be | need to be | must be
    """
)
DECISION_CUES = phrase_list(
    """
    decided | decide | decision | agreed | agree | settled on | concluded | voted
    committed to | chose | chosen | picked | opted | going with | go with | let's go with
    let's use | we'll use | we will use | standardized on | standardised on | reversed
    changed my mind | from now on | going forward | starting
    """
)
PROJECT_CUES = phrase_list(
    """
    due | deadline | launch | launches | launched | release | releases | released | ship
    ships | shipped | scheduled | planned | on hold | blocked | done | finished
    complete | completed | postponed | slipped | delayed | pushed | beta | audit | exam
    appointment | trip | renewal | reveal | manuscript
    kickoff | go-live | freeze | cutover | live | in production
    closed won | signed | approved | rejected | extension
    """
)
#: Words of a rule a place or a group keeps ("helmets are mandatory on rides", "entry is free
#: for members", "dogs are not allowed inside"): a decision about how things are done.
POLICY_CUES = phrase_list(
    """
    mandatory | compulsory | obligatory | not allowed | not permitted | forbidden | prohibited
    banned | optional | is free | are free | free of charge | no charge | welcome | are welcome
    is welcome | not welcome
    """
)
#: Things and tokens of the technical environment.
ENVIRONMENT_CUES = phrase_list(
    """
    port | server | service | database | db | api | ci | build | builds | cluster
    container | image | staging | production | prod | node | python | postgres | redis
    kafka | docker | kubernetes | portal | wifi | vpn | host | hosted | hosts
    needs | requires | breaks | fails | crashes | times out | throttles
    defaults to | listens | runs out of | is stored in | lives in | phone system
    sandbox | login | crm | version | upgraded | sdk | endpoint | webhook | flag | queue
    caches | read-only | timeout | limit
    go through | goes through | come in through | comes in through | software
    """
)
#: What someone is to a group or a business: "the new sous chef is Haruka Ito", "the
#: chaperones are Karen and Debbie". Said with a name, the statement is about people.
ROLES = phrase_list(
    """
    chef | chefs | cook | coach | coaches | treasurer | secretary | chair | chairman
    chairwoman | chairperson | president | vice-president | captain | driver | drivers
    chaperone | chaperones | vet | accountant | bookkeeper | instructor | instructors | trainer
    leader | caretaker | cleaner | steward | stewards | organiser | organizer | rep
    representative | inspector | officer | warden | tutor | mentor | receptionist | technician
    mechanic | plumber | electrician | photographer | conductor | administrator | solicitor
    manager | director | volunteer | volunteers | helper | helpers | assistant | deputy
    first aider | welfare officer | safeguarding lead | fire warden | key holder | keyholder
    """
)
#: What someone is to the speaker, beside :data:`ROLES`: "helen is my supervisor", "my gp
#: is dr shah". Said of a word, it makes that word a name (:mod:`.spelling`).
KIN_ROLES = ROLES + phrase_list(
    """
    supervisor | co-supervisor | boss | line manager | gp | doctor | dentist | consultant
    physio | therapist | midwife | nurse | landlord | landlady | teacher | lead | team lead
    nanny | childminder | sponsor
    """
)
#: Jobs a roster line names beside :data:`KIN_ROLES` ("Cody Barnes - installer", "Omar: head
#: joiner"): with a name before them, a line of who does what.
JOB_WORDS = words(
    "mgr tech techs installer fitter apprentice bartender barista sommelier engineer designer "
    "developer admin clerk porter groundsman foreman joiner carpenter labourer plasterer roofer "
    "welder carer cook"
)
#: What people share out between them: "kim and raj do the mass spec bookings".
DUTY_VERBS = words(
    "do does run runs handle handles cover covers coach coaches share split take takes manage "
    "manages lead leads teach teaches book books staff work works swapped swap look looks "
    "organise organises organize organizes sort sorts"
)
#: Titles said before a person's name, typed in lower case ("mrs ahmed", "coach dan"); the
#: formal ones are said before nothing else ("dr okafor"; but "the nurse said").
FORMAL_TITLES = words("mr mrs ms miss dr prof")
TITLES = FORMAL_TITLES | words("coach nurse sister auntie aunt uncle nan grandma grandpa")
#: Verbs and words that tie a statement to a person: who they are, what they like.
PERSONAL_CUES = phrase_list(
    """
    prefer | prefers | like | likes | love | loves | enjoy | enjoys | hate | hates | dislike
    dislikes | rather | allergic | vegetarian | vegan | live | lives | living | based in
    moved to | work | works | working | name | called | go by | goes by | husband | wife
    partner | son | daughter | kids | children | mother | father | brother
    roommate | friend | boss | manager | report to | reports to | team | role | job | speak
    speaks | learning | study | studies | born | from | birthday | timezone | time zone
    time | dog | cat | pet | engineer | developer | designer | lead | student | teacher
    doctor | nurse | writer | owner | intern | director
    assistant | realtor | paralegal | champion | contact | supervisor | advisor
    editor | agent | babysitter | quota | territory
    marathon
    """
)

# --- change: what says that an earlier statement no longer holds ----------------------------

MONTHS = phrase_list(
    """
    january | february | march | april | may | june | july | august | september | october
    november | december | jan | feb | mar | apr | jun | jul | aug | sep | sept | oct | nov
    dec
    """
)
#: Of :data:`UPDATE_MARKERS`, those that alone do not send a statement to the likeness (an
#: update no rule connected, ``offline._cued``): "a new chapter", "ever since" say nothing of
#: a thing already known changing, and casual talk is full of them (measured on LoCoMo).
WEAK_UPDATE_MARKERS = phrase_list("new | since")
#: Words by which a statement says that it replaces an earlier one; and the month a value
#: starts from ("From May small tank service is 70 pound").
UPDATE_MARKERS = (
    *phrase_list(
        """
    now | actually | anymore | any more | any longer | no longer | instead | instead of
    changed | change | changed my mind | switched | switch | moved | new | since | update
    updated | these days | not anymore | after all | scratch the | forget the
    renamed | raised | lowered | reversed | upgraded | downgraded | fixed | slipped
    postponed | pushed | rescheduled | replaced | relocated | starting | as of | from now on
    going forward | correction | no, | not | wrong | outdated | quit | left
    went over to | gone over to | went to | has gone to | took over | taken over | takes over
    stepping in | stepped in | steps in | brought in | signed with | signed up with
    from next | from this | until further notice | these days | nowadays | any longer
    push | pushed back | put back | brought forward | bring forward | extended | bumped
    moving | changing | switching | shifting | shifted | bumping
    go up | goes up | went up | gone up | going up | scrap that | scrap the
    go to | goes to | gone to | becomes | become
    from the first | from the 1st | from the start of | from the beginning of
    from the week of | from the week after
    """
    ),
    *(f"from {m}" for m in MONTHS if len(m) > 3),
    *(f"from the {m}" for m in MONTHS if len(m) > 3),
    "from may",  # the month: "may" alone is also the verb, "from may" hardly ever
    *phrase_list(
        """
    from easter | from christmas | from new year | from the new year | from the summer
    from the spring | from the autumn | from the winter | from summer | from spring
    from autumn | from winter | from next term | from the new term | from the new season
    from next season
    """
    ),
)
#: A phrase that names the value being replaced: "instead of Fridays", "not 8:30".
OLD_VALUE_LEADS = phrase_list(
    """
    instead of | rather than | not | no longer | down from | scratch the
    forget | forget the | not by | not in | not at
    """
)
#: What is over each time it has been: "the meeting is over" ends no meeting in memory.
OF_THE_DAY = words(
    "meeting meetings class lesson session game match shift call day week night party show "
    "service event race sale"
)
#: What ends for good when it is finished or done, a thing that recurs or an arrangement
#: ("the gardening club has finished"); not a piece of work ("the website is finished").
ENDS_WHEN_FINISHED = words(
    "club classes nights sessions evenings mornings weekends days leagues groups slots deal offer "
    "arrangement partnership contract permission lessons rota meetups residency subscription "
    "membership sponsorship workshop workshops tour tours tearoom festival fair league rotation "
    "rota scheme stall"
)
#: Verbs by which something stops being used or true ("we no longer use X": X is retired).
RETIRE_VERBS = phrase_list(
    """
    no longer use | no longer uses | no longer using | no longer run | no longer need
    no longer have | don't use | do not use | don't need | stopped using | packed in
    stopped | quit | dropped | removed | retired
    decommissioned | got rid of | ditched | killed | sunset | sunsetted | turned off
    shut down | deleted | uninstalled | moved off | moved away from | cancelled | canceled
    cut | closed | gave up on | gave up | given up on | given up | are not on
    are no longer on | aren't on | 're not on | 're no longer on | sold | we're off | are off
    no longer do | no longer offer | no longer take | no longer sell | no longer stock
    no longer provide | no longer accept | no longer carry | no longer run
    stop | stops | stop doing | stops doing | stopped doing | cancel | cancels
    come off | came off | 've come off | have come off | withdrew from | withdraws from
    withdraw from | pulled out of | pull out of | pulls out of | shut | shuts
    pulled the plug on | pull the plug on | had to cancel | had to drop | had to stop
    binned | folded | axed | canned | terminated | fired | sacked | wound down
    ended our contract with | ended the contract with | ended our deal with
    ended the deal with | ended our agreement with | ended the agreement with
    ended our partnership with | ended the partnership with | cut ties with
    stepped back from | stepped away from | stepped down from | finished with | done with
    cancelling | canceling | not renewing
    getting rid of | get rid of | gets rid of | dropping | scrapping | killing | stop with
    stopping with | disbanded | binning | ditching | axing | withdrawing | withdrew | withdraw
    pulled out | pull out | pulling out | took ourselves off | taken ourselves off
    take ourselves off
    """
)
#: States by which a thing the clause is about has ended: "the old build box is gone".
ENDED_STATES = phrase_list(
    """
    retired | decommissioned | shut down | turned off | gone | removed | cancelled | canceled
    dropped | no longer used | discontinued | scrapped | done with | no more | switched off
    shut off | expired | lapsed | didn't renew | did not renew | won't be renewing
    isn't renewing | is not renewing | binned | folded | a thing of the past | off the menu
    off for good | out for us | closing down | shutting down | closed down
    axed | canned | wound down | terminated | no longer in use | out of use | the boot
    the chop | the axe | disbanded | off the table | off the schedule | off the list
    off the calendar | off the cards | done for the season | done for the year
    """
)
#: Said first with no subject, these end something rather than tell what is being done now:
#: "scrapping the Saturday line runs".
ENDING_GERUNDS = words(
    "scrapping dropping ditching cancelling canceling killing stopping axing binning retiring"
)
#: States whose negation says a thing has stopped: "homework club isn't happening this year".
NEGATED_STATES = phrase_list(
    """
    happening | running | going ahead | taking place | on offer | offered
    continuing | a thing | in use
    """
)
#: How a clause says that the speaker no longer uses something: a negation, then one of
#: these, then the thing ("we're not on Zendesk any more", "we aren't using Jira anymore").
NEGATED_USE = phrase_list(
    """
    on | using | use | with | in | at | through | buying from | going to | taking | accepting
    | selling | stocking | offering | doing | running | accept | take | offer | sell
    | stock | run | have
    """
)
#: Words that end a negated use: without one of them ("not on call this week") nothing ended.
NO_LONGER = phrase_list("any more | anymore | any longer")
#: Skeleton words too common to say two statements are about the same thing.
GENERIC_WORDS = words(
    "every each per mostly usually always often also still thing things stuff way lot kind "
    "get gets go goes make makes take takes"
)
#: Verbs too light to say what a statement is about: "Jobs go into Jobber", "Malik takes
#: billing escalations" are about jobs and escalations, not about going or taking.
LIGHT_VERBS = words(
    "use uses used using go goes went gone going come comes came coming take takes took taken "
    "do does did done doing get gets got make makes made have has had handle handles handled "
    "run runs ran running keep keeps kept put puts give gives gave need needs want wants be "
    "look looks work works worked say says said now new same before after still happen "
    "happens happened through via into onto across within without out off decide decided "
    "agree agreed choose chose chosen pick picked plan planned think end start begin stay "
    "stays stayed remain remains remained continue continues"
)
#: Kinds of slot that one provider, tool, place or person fills at a time, by the words that
#: name them: "Opsgenie handles alerts now" and "Paging goes through PagerDuty" are both about
#: alerting, though they share no word. A word may name more than one kind.
SLOT_CATEGORIES: dict[str, frozenset[str]] = {
    "alerting": words(
        "alert alerts alerting paging pager pages on-call oncall incident incidents monitoring"
    ),
    "telephony": words(
        "phone phones telephone telephones telephony switchboard voip landline calls"
    ),
    "ticketing": words("ticket tickets ticketing helpdesk help-desk servicedesk"),
    "shipping": words(
        "courier couriers parcel parcels postage shipping shipment shipments carrier carriers "
        "freight haulage pickup pickups collects collected collection collections postal posted"
    ),
    "supply": words(
        "supplier suppliers supply supplies supplied vendor vendors wholesaler wholesalers "
        "distributor distributors stockist procurement sourcing order orders ordered"
    ),
    "release": words(
        "deploy deploys deployed deployment deployments release releases released ship ships "
        "shipped launch launches"
    ),
    "hosting": words("host hosts hosting hosted server servers cloud datacenter data-centre"),
    "payments": words(
        "payment payments invoicing invoices invoice billing till tills checkout card-reader"
    ),
    "accounting": words("accounting accountant accountants bookkeeping bookkeeper payroll"),
    "venue": words("venue venues hall halls location premises auditorium"),
    "messaging": words("email emails mail newsletter newsletters chat messaging"),
    "documents": words("docs documents drive storage wiki spreadsheet spreadsheets sheet sheets"),
    "booking": words("booking bookings appointments reservations diary calendar"),
    "insurance": words("insurance insurer insurers insured"),
    "connectivity": words("broadband internet fibre fiber wifi isp"),
    "management": words("manager boss supervisor supervises reports report line-manager"),
    "childcare": words("childminder childminding nanny babysitter sitter nursery daycare creche"),
    "medicine": words("doctor doctors gp physician"),
    "teaching": words("teacher tutor instructor coach"),
    "database": words("database databases db warehouse"),
    "vehicle": words("van vans minibus bus coach truck vehicle vehicles"),
}
#: Words that only say a thing fills a slot, whatever the slot: "our phone *system* is X".
SLOT_HEADS = words(
    "system systems provider providers company companies service services platform tool tools "
    "app apps software contract contracts firm online"
)
#: States and their opposites: "large Safari uploads work now" outdates "uploads over 5 GB fail
#: on Safari"; each pair is (one side, the other side).
OPPOSITE_STATES: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (
        words("fail fails failing failed broken breaks break crash crashes"),
        words("work works working fixed resolved"),
    ),
    (words("down offline unavailable"), words("up online available back")),
    (words("blocked stuck"), words("unblocked unstuck")),
    (words("closed shut"), words("open opened reopened")),
    (words("disabled off"), words("enabled on")),
)
#: Groups that are priced or timed apart: "gents cuts £25 now" is not the ladies' price, "the
#: weekend rate" not the weekday one. Each group holds words of which a value is said alone.
PAIRED_GROUPS: tuple[frozenset[str], ...] = (
    words("ladies lady women woman womens"),
    words("gents gent men man mens"),
    words("adult adults"),
    words("child children kids kid junior juniors"),
    words("single singles"),
    words("double doubles twin twins"),
    words("weekday weekdays"),
    words("weekend weekends"),
    words("member members"),
    words("nonmember nonmembers non-member non-members visitor visitors"),
    words("peak"),
    words("off-peak offpeak"),
)
#: Constructions that name a slot category without a word of it: "tyres come from Velotech",
#: "we buy flour from Marriage's" are about supply.
SLOT_CONSTRUCTIONS: dict[str, str] = {
    "supply": r"\b(?:comes?|came|get|gets|got|buy|buys|bought|orders?|ordered|sources?|sourced)"
    r"\b[^.;]{0,30}?\bfrom\b",
}
#: The words of "we switched from X to Y".
SWITCH_VERBS = phrase_list(
    """
    switched | moved | migrated | changed | swapped | went | transitioned
    switching | migrating | moving | changing | swapping | transitioning
    """
)
#: Verbs that say a thing is in use: "we use X", "the app runs on X".
USE_VERBS = phrase_list(
    """
    use | uses | using | use of | on | run | runs | running | chose | picked | go with
    going with | went with | stick with | adopted | standardized on | moved to
    migrated to | relies on | hosted on | deployed to | deployed on | is on | are on
    live in | lives in | track everything in
    """
)
#: Words of one kind where a person has one at a time: a newer one replaces the older.
EXCLUSIVE_CLASSES: tuple[frozenset[str], ...] = (
    words("vegetarian vegan pescatarian omnivore carnivore"),
    words("a1 a2 b1 b2 c1 c2"),
    words("early late night morning evening afternoon"),
)

#: Predicates that hold one value at a time for one subject: the newer replaces the older.
#: Each names its class; a statement is read with the first verb phrase that matches.
SINGLE_VALUED: dict[str, tuple[str, ...]] = {
    "location": (
        "live in",
        "lives in",
        "living in",
        "based in",
        "moved to",
        "relocated to",
        "relocate to",
        "moving to",
        "now live in",
    ),
    "employer": ("work at", "works at", "work for", "works for", "joined", "employed at"),
    "role": ("work as", "works as"),
    "name": ("name is", "called", "go by", "goes by", "renamed"),
    "timezone": ("time zone", "timezone", "on central", "on pacific", "on eastern"),
    "date": (
        "due",
        "is due",
        "due on",
        "deadline",
        "slipped to",
        "moved to",
        "pushed to",
        "postponed to",
        "rescheduled for",
        "planned for",
        "scheduled for",
        "is on",
        "starts on",
        "launches on",
    ),
    "amount": ("is", "are", "raised", "lowered", "cut to", "down to"),
}

#: Canonical wording of a person's single-valued attribute, when the clause is exactly
#: subject, verb and value: "I moved to Berlin last month" -> "Sam lives in Berlin".
CANONICAL: dict[str, str] = {
    "location": "{s} lives in {v}",
    "employer": "{s} works at {v}",
}

# --- grammar ------------------------------------------------------------------------------

STOP_WORDS = words(
    "a an the is are was were be been being am to of for in on at by with and or that this it "
    "its their they them we our us as from into than then so also just now currently very really "
    "has have had do does did doing will would can could i me my mine you your he she his her him "
    "there here which who what when where why how all any some no not but if about up out over "
    "after before again too only own same such both each few more most other s t don't isn't "
    "i'm i've i'll i'd we're we've we'll it's that's let's get got still ever even much many "
    "new old one two"
)
ADVERBS = words(
    "just also always usually still now never only really often sometimes mostly all both "
    "currently finally already definitely actually generally normally typically recently "
    "mainly primarily officially fully totally much strongly honestly personally mostly "
    "basically simply truly"
)
MODALS = words("will would can could should must might may shall did had used 'll 'd")
IRREGULAR_PAST = words(
    "built ran made chose got went had did took wrote set put cut kept left found gave saw sent "
    "spent broke began bought brought fell felt forgot froze hit held knew led lost met paid "
    "read rode rose said sold shut sat split spoke stood stuck taught told thought threw "
    "understood woke won wore was were became came drove ate flew grew hung heard lay lent let "
    "meant quit rang sang shot slept sped swam swore thrust wept wound"
)
IRREGULAR_PRESENT = {
    "am": "is",
    "are": "is",
    "have": "has",
    "do": "does",
    "go": "goes",
    "don't": "doesn't",
    "haven't": "hasn't",
    "aren't": "isn't",
    "were": "was",
    "weren't": "wasn't",
    "'m": "is",
    "'ve": "has",
    "'re": "is",
}
#: Words in "-ing" that are not a verb: a clause that starts with one is not progress.
NOT_GERUNDS = words(
    "everything nothing something anything morning evening spring string during ceiling "
    "thing king ring wedding meeting building painting clothing pudding"
)
#: Common verbs (base forms): a clause about a thing needs one to state anything ("Coffee
#: first, then the review" states nothing). Inflected forms are found by their endings.
VERBS = words(
    "be have do go get make take give keep let put run set say see come know think want need "
    "use find tell ask work seem feel try leave call move live believe hold bring write "
    "provide sit stand lose pay meet include continue learn change lead understand watch follow "
    "stop create speak read allow add spend grow open close walk win offer remember love like "
    "prefer hate enjoy consider appear buy wait serve die send expect build stay fall cut reach "
    "kill remain suggest raise pass sell require report decide pull break fail crash hang listen "
    "cover start end own manage handle join host store cache drop throttle rotate reset wipe "
    "expire default point resolve connect deploy ship launch release slip postpone delay "
    "schedule plan block approve sign cancel retire replace switch migrate upgrade downgrade "
    "support accept reject ignore overwrite truncate purge restart lock timeout apply charge "
    "refund close drive cook clean check sort rank book visit teach study train "
    "coach draft edit publish hire fire promote review merge test fix lock time mean cause "
    "avoid prevent stop solve help improve reduce increase limit cap go sit lie rise rose "
    "belong contain depend exist matter cost weigh measure equal fit suit enter "
    "shadow refund print order email text deliver pick rent share sync back log track "
    "sit speak spell spell teach pay verify arrive happen occur renew collect visit last "
    "carry stock sell look care mind supply organise organize coordinate head oversee process "
    "cater clear treat see rehearse record mix post"
)
#: Preference verbs read as one: "likes a numbered list" and "prefers them grouped" meet.
SAME_VERB = {"like": "prefer", "love": "prefer", "enjoy": "prefer", "rather": "prefer"}
#: Endings of common nouns: a capitalised first word ending so is not a name ("Leadership").
NOUN_ENDINGS = ("ship", "tion", "sion", "ment", "ness", "ity", "ance", "ence", "ers", "ies")
#: Words that cannot be the verb right after "I" (then the sentence is kept as said).
NOT_VERBS = words(
    "and or but the a an to of in on at for with from by as if so that this my our your their "
    "his her its it which who what when where why how not no"
)
PRONOUN_SUBJECTS = words(
    "i you he she they it this that these those we there here which who what everything "
    "nothing something anything someone everyone all both one each every"
)
#: Words that never start a name, even capitalised.
NAME_STOP = words(
    "The This That These Those It I We You He She They Our My Your His Her Their There Here "
    "What When Where Why How Which Who Also And But So Then Now Today Tomorrow Yesterday "
    "Everyone Nobody Someone Everything Nothing Let Please Thanks Hi Hey Hello Yes No Ok Okay "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday Staging Production Prod "
    "Sure Great Cool Just Maybe Perhaps If Since Because After Before While Once Team Mostly "
    "January February March April May June July August September October November December "
    "Starting Last Next Every Each Most Some Any All Both Not New Old Big Small Good Bad "
    "Yeah Yep Actually Honestly Seriously Reminder Update Heads Quick Note Known Close Nah "
    "As Only Annual Usually Always Never Often Sometimes Weekly Monthly Daily Yearly "
    # A lesson's labels ("... two nights. Fix: ..."), never a name.
    "Fix Fixes Cause Lesson Lessons Solution Workaround Problem Issue Reason Takeaway Outcome "
    # A preposition opens a phrase, never a name: "From Monday the kids meet ...".
    "From For In On At By With Until Till To Of Into Onto Via Per During Through Within "
    "Without Across Around Over Under Between Behind Beyond Towards Toward Against Despite"
)
WEEKDAYS = phrase_list(
    """
    monday | tuesday | wednesday | thursday | friday | saturday | sunday | mondays
    tuesdays | wednesdays | thursdays | fridays | saturdays | sundays | weekdays | weekends
    """
)
#: Days of the week as shops write them short ("Tue-Sun", "Mon/Wed").
WEEKDAYS_SHORT = words("mon tue tues wed weds thu thur thurs fri sat sun")
#: "10 till 5.30": what comes after it is a time.
UNTIL = words("till til until")
#: Numbers in words: "four doctors", "two weeks", "three seats" carry a value as "4" does.
NUMBER_WORDS = words(
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
    "hundred thousand half dozen"
)
#: Value tokens: a time, a number with its unit, a version, a port, a path, an address.
VALUE_TOKEN = re.compile(
    r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b|\bv?\d+(?:[.,]\d+)*(?:k|m|%|st|nd|rd"
    r"|th)?\b|\b\d+\s?(?:gb|mb|tb|ms|s|mm|cm|km|kg|mins?|hours?|days?|weeks?|months?"
    r"|years?|percent|euros?|dollars?)\b|[\w.+-]+@[\w-]+\.[\w.-]+|(?<![\w.])(?:~|\.{1,2})?/[\w.-]+"
    r"(?:/[\w.*-]*)+|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|`[^`]+`",
    re.I,
)
