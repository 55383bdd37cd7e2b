"""History search (H1, O3, SPEC 15 ``context search``): ranking, quoting, consistency, tuning."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reverie import Reverie, Settings
from reverie.errors import RefusedInput
from reverie.index import fts, history

T0 = 1_683_554_160.0  # 2023-05-08T13:56:00Z


@pytest.fixture
def hv(rv: Reverie) -> Reverie:
    rv.ensure_channel("D1", "dm")
    rv.ensure_channel("G1", "group")
    rv.create_conversation("ada", "D1", conversation_id="deploys")
    for i, (role, author, text) in enumerate(
        [
            ("user", "Caroline", "How do we deploy the billing service?"),
            ("assistant", None, "Deploys of billing run through make release on Tuesdays."),
            ("tool", None, "deploy.sh output: billing release tuesday OK"),
            ("user", "Caroline", "And who approves them?"),
            ("assistant", None, "Melanie approves every release."),
        ]
    ):
        rv.append_message("deploys", role, text, author=author, time=T0 + i)
    rv.create_conversation("ada", "D1", conversation_id="hobbies")
    rv.append_message(
        "hobbies",
        "user",
        "Melanie painted a sunrise last week",
        author="Caroline",
        time=T0 + 86_400,
    )
    return rv


def search(rv: Reverie, query: str, limit: int = 8) -> list[tuple[str, int, int]]:
    return [(h.conversation, h.start, h.end) for h in rv.context_search("ada", query, limit)]


def test_h1_hits_are_ranked_message_ranges_that_context_read_opens(hv: Reverie) -> None:
    hits = hv.context_search("ada", "deploy billing release")
    assert (hits[0].conversation, hits[0].start, hits[0].end) == ("deploys", 1, 2)
    assert hits[0].excerpt.startswith("Deploys of billing")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.score > 0 for h in hits)
    for h in hits:
        page = hv.context_read("ada", h.conversation, h.start, h.end)
        assert [m.position for m in page.messages] == [h.start]


def test_stemming_matches_word_forms(hv: Reverie) -> None:
    assert ("deploys", 4, 5) in search(hv, "approval approving")  # porter: approv
    assert ("hobbies", 0, 1) in search(hv, "paintings")


def test_tool_logs_are_never_searched(hv: Reverie) -> None:
    assert ("deploys", 2, 3) not in search(hv, "deploy.sh output OK", 20)
    assert Counter(c for c, _ in hv.conversations.history_rows()) == {"deploys": 4, "hobbies": 1}


def test_the_speaker_is_indexed_with_its_own_weight(hv: Reverie) -> None:
    assert {(c, s) for c, s, _ in search(hv, "caroline", 20)} == {
        ("deploys", 0),
        ("deploys", 3),
        ("hobbies", 0),
    }


def test_a_conversation_that_turns_off_leaves_search_at_once(hv: Reverie) -> None:
    assert search(hv, "sunrise") == [("hobbies", 0, 1)]
    hv.append_message("hobbies", "user", "group hello", channel_id="G1", time=T0 + 90_000)
    assert search(hv, "sunrise") == []
    assert "hobbies" not in {c for c, _ in hv.conversations.history_rows()}


def test_the_query_filters_on_mode_even_if_rows_were_left_behind(hv: Reverie) -> None:
    # Rows of an off conversation should never exist; if one did, the query still hides it.
    hv.create_conversation("ada", "G1", conversation_id="grp")
    hv.append_message("grp", "user", "zanzibar plans", time=T0)
    msg_id = hv.state.conn.execute("SELECT id FROM messages WHERE conversation_id = 'grp'")
    with hv.state.transaction() as conn:
        history.index_messages(
            conn,
            [
                (
                    msg_id.fetchone()[0],
                    hv.agent("ada").id,
                    "grp",
                    0,
                    history.MessageText("user", None, "zanzibar", T0),
                )
            ],
        )
    assert ("grp", 0) in hv.conversations.history_rows()
    assert search(hv, "zanzibar") == []
    with hv.state.transaction() as conn:
        conn.execute("UPDATE conversations SET deleted = 1 WHERE id = 'deploys'")
    assert search(hv, "billing") == []


def test_other_agents_history_is_not_searched(hv: Reverie) -> None:
    hv.create_agent("bob")
    hv.create_conversation("bob", "D1", conversation_id="bobs")
    hv.append_message("bobs", "user", "bob deploys billing too", time=T0)
    assert {h.conversation for h in hv.context_search("bob", "billing")} == {"bobs"}
    assert "bobs" not in {c for c, _, _ in search(hv, "billing", 20)}


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text())
def test_any_text_is_a_valid_query(hv: Reverie, query: str) -> None:
    hits = hv.context_search("ada", query, 20)
    assert all(h.conversation in {"deploys", "hobbies"} for h in hits)


@pytest.mark.parametrize(
    "query", ['NOT "billing', "billing*", "billing OR", "-billing", "NEAR(a b)", "speaker:x", ")("]
)
def test_fts_syntax_in_queries_is_plain_text(hv: Reverie, query: str) -> None:
    hv.context_search("ada", query)


def test_the_limit_is_1_to_20(hv: Reverie) -> None:
    assert len(hv.context_search("ada", "billing release melanie caroline", 1)) == 1
    for bad in (0, 21):
        with pytest.raises(RefusedInput) as e:
            hv.context_search("ada", "x", bad)
        assert e.value.code == "invalid_limit"
    assert hv.context_search("ada", "   ...   ") == []


def _expected_rows(rv: Reverie) -> Counter[tuple[str, int]]:
    rows = rv.state.conn.execute(
        "SELECT m.conversation_id, m.position FROM messages m JOIN conversations c "
        "ON c.id = m.conversation_id WHERE c.memory_mode = 'on' AND c.deleted = 0 "
        "AND m.role != 'tool'"
    ).fetchall()
    return Counter((c, p) for c, p in rows)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["append", "group", "tool", "delete", "link", "classify", "new"]),
            st.integers(0, 3),
        ),
        max_size=25,
    )
)
def test_index_rows_always_follow_the_rules(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int]]
) -> None:
    """Whatever happens, the rows are exactly the non-tool messages of memory-on,
    not deleted conversations, and a rebuild gives the same rows and answers."""
    rv = Reverie(tmp_path_factory.mktemp("h") / "home", create=True)
    rv.create_agent("ada")
    rv.ensure_channel("D1", "dm")
    rv.ensure_channel("G1", "group")
    convs = [rv.create_conversation("ada", "D1", unclassified=i == 3).id for i in range(4)]
    t = T0
    for op, i in steps:
        t += 1
        cid = convs[i]
        conv = rv.conversation(cid)
        if op == "new":
            convs[i] = rv.create_conversation("ada", "D1", parent=None).id
        elif conv.deleted:
            continue
        elif op in ("append", "group", "tool"):
            rv.append_message(
                cid,
                "tool" if op == "tool" else "user",
                f"word{i} step {t}",
                channel_id="G1" if op == "group" else None,
                time=t,
            )
        elif op == "delete":
            rv.delete_conversation(cid)
        elif op == "link":
            rv.link_chat(cid, "G1" if i % 2 else "D1")
        else:
            rv.classify_conversation(cid)
        assert rv.conversations.history_rows() == _expected_rows(rv)
    before = [rv.context_search("ada", f"word{i} step", 20) for i in range(4)]
    rv.history_reindex()
    assert rv.conversations.history_rows() == _expected_rows(rv)
    assert [rv.context_search("ada", f"word{i} step", 20) for i in range(4)] == before
    rv.close()


def test_a_failed_import_leaves_no_rows(hv: Reverie) -> None:
    before = hv.conversations.history_rows()
    good = '{"conversation": "x", "agent": "ada", "channel": {"kind": "dm", "id": "D1"}, '
    good += '"author": "a", "role": "user", "text": "quasar", "time": "2024-01-01T00:00:00Z"}'
    with pytest.raises(RefusedInput):
        hv.import_conversations([good, "{broken"])
    assert hv.conversations.history_rows() == before
    assert search(hv, "quasar") == []


# tuning: tokenizer, document builder, weights, scan fallback


def test_a_message_is_found_by_the_words_of_the_two_messages_before_it(hv: Reverie) -> None:
    # "service" is said once, at position 0; positions 1 and 3 have it in their context (the
    # tool log at 2 is skipped), position 4 does not (two messages back), nor another
    # conversation. The message that says it ranks first.
    hits = search(hv, "service", 20)
    assert hits[0] == ("deploys", 0, 1)
    assert set(hits) == {("deploys", 0, 1), ("deploys", 1, 2), ("deploys", 3, 4)}
    assert search(hv, "output") == []  # a tool log is no message's context either
    (context,) = hv.state.conn.execute(
        "SELECT context FROM history_docs WHERE conversation_id = 'deploys' AND position = 4"
    ).fetchone()
    assert context == (
        "Deploys of billing run through make release on Tuesdays. And who approves them?"
    )


def test_a_hit_found_by_its_context_quotes_the_words_before_it(hv: Reverie) -> None:
    by_position = {h.start: h.excerpt for h in hv.context_search("ada", "billing service", 20)}
    # position 0 says it itself; position 3 ("And who approves them?") was found by context
    assert by_position[0] == "How do we deploy the billing service?"
    assert by_position[3].startswith('[after: "How do we deploy the billing service?')
    assert by_position[3].endswith('"] And who approves them?')
    # function words do not count: message 3 holds "the" (in "them"), yet it was found by
    # "service" in its context alone
    hits = {h.start: h.excerpt for h in hv.context_search("ada", "the service", 20)}
    assert hits[3].startswith("[after: ")
    long = "filler " * 100 + "a quasar appeared"
    hv.append_message("hobbies", "user", long, time=T0 + 86_500)
    hv.append_message("hobbies", "assistant", "Wonderful!", time=T0 + 86_501)
    quoted = next(h.excerpt for h in hv.context_search("ada", "quasar", 20) if h.start == 2)
    assert 'quasar appeared"] Wonderful!' in quoted
    assert len(quoted) <= fts.EXCERPT_CHARS + 20


def test_the_context_field_weighs_less_than_the_message_itself(hv: Reverie) -> None:
    by_position = {h.start: h.score for h in hv.context_search("ada", "tuesdays", 20)}
    assert set(by_position) == {1, 3, 4}
    assert by_position[1] > by_position[3]
    hv.conversations.weights = (1.0, 1.0, 0.5, 0.0)
    assert {h.start for h in hv.context_search("ada", "tuesdays", 20) if h.score > 0} == {1}


@pytest.mark.sqlite_only
def test_an_index_of_an_older_version_is_rebuilt_on_open_keeping_its_tokenizer(
    hv: Reverie, caplog: pytest.LogCaptureFixture
) -> None:
    hv.history_reindex(tokenize="unicode61")
    hv.close()
    # Make the database what version 4 wrote: no context column, a four-field FTS5 table,
    # none of the tables of migrations 6 and 7 (the agent run, tokens), nor 10's column.
    conn = sqlite3.connect(hv.home / "reverie.db", isolation_level=None)
    conn.executescript(
        """
        DROP TRIGGER history_docs_ai; DROP TRIGGER history_docs_ad; DROP TABLE history_fts;
        ALTER TABLE history_docs DROP COLUMN context;
        CREATE VIRTUAL TABLE history_fts USING fts5 (body, speaker, date, scope,
            content='history_docs', content_rowid='id', tokenize='unicode61');
        INSERT INTO history_fts (history_fts) VALUES ('rebuild');
        DROP TABLE soul_drafts; DROP TABLE soul_versions; DROP TABLE approvals;
        DROP TABLE instructions; DROP TABLE outbox; DROP TABLE turns; DROP TABLE run_sessions;
        ALTER TABLE agents DROP COLUMN memory_framing;
        DROP TABLE api_tokens; DROP TABLE sign_in_links; DROP TABLE admin_sessions;
        ALTER TABLE idempotency_keys DROP COLUMN legacy;
        PRAGMA user_version = 4;
        """
    )
    conn.close()
    with Reverie(hv.home) as again:
        assert "Rebuilding the history search index of 5 messages" in caplog.text
        assert again.state.conn.execute("PRAGMA user_version").fetchone()[0] >= 5
        assert history.is_current(again.state.conn)
        assert history.table_tokenizer(again.state.conn) == "unicode61"
        assert {h.start for h in again.context_search("ada", "service", 20)} == {0, 1, 3}
        assert again.context_search("ada", "approval") == []  # still no stemming
        assert again.conversations.history_rows() == _expected_rows(again)
        assert again.agent("ada").memory_framing == "guide"  # migration 6 ran too


@pytest.mark.sqlite_only
def test_the_tokenizer_can_be_changed_and_stays(hv: Reverie) -> None:
    assert ("deploys", 4, 5) in search(hv, "approval")
    assert hv.history_reindex(tokenize="unicode61") == 5
    assert search(hv, "approval") == []  # no stemming any more
    assert ("deploys", 4, 5) in search(hv, "approves")
    hv.append_message("hobbies", "user", "approvals are pending", time=T0 + 99_999)
    assert ("hobbies", 1, 2) in search(hv, "approvals")
    hv.close()
    with Reverie(hv.home) as again:
        sql = again.state.conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'history_fts'"
        ).fetchone()[0]
        assert "'unicode61'" in sql
        assert [(h.conversation, h.start) for h in again.context_search("ada", "approval")] == []


@pytest.mark.sqlite_only
def test_a_bad_tokenizer_is_refused_and_changes_nothing(hv: Reverie) -> None:
    for bad in ("nosuchtokenizer", "porter); DROP TABLE messages; --"):
        with pytest.raises(RefusedInput) as e:
            hv.history_reindex(tokenize=bad)
        assert e.value.code == "invalid_tokenizer"
    assert ("deploys", 1, 2) in search(hv, "billing")
    assert ("deploys", 4, 5) in search(hv, "approval")


def test_the_document_builder_can_add_a_date(hv: Reverie) -> None:
    assert search(hv, "May 2023") == []
    hv.conversations.document = history.dated_document
    hv.history_reindex()
    assert len(search(hv, "May 2023", 20)) == 5
    assert history.dated_document(history.MessageText("user", "x", "t", T0)).date == "8 May 2023"
    # new messages use the builder too
    hv.append_message("hobbies", "user", "later", time=T0 + 40 * 86_400)
    assert search(hv, "june") == [("hobbies", 1, 2)]


def test_field_weights_change_the_ranking(hv: Reverie) -> None:
    # "caroline" is only ever a speaker: with no weight on that field it adds nothing.
    hv.conversations.weights = (1.0, 0.0, 0.0, 0.0)
    assert {h.score for h in hv.context_search("ada", "caroline")} == {0.0}
    hv.conversations.weights = (1.0, 2.0, 0.0, 0.0)
    assert all(h.score > 0 for h in hv.context_search("ada", "caroline"))


def test_the_scan_backend_answers_without_fts5(home: Path) -> None:
    rv = Reverie(settings=Settings.load(home, search_backend="scan"), create=True)
    rv.create_agent("ada")
    rv.ensure_channel("D1", "dm")
    rv.ensure_channel("G1", "group")
    rv.create_conversation("ada", "D1", conversation_id="c")
    rv.append_message("c", "user", "the billing deploy", author="Caroline", time=T0)
    rv.append_message("c", "tool", "billing tool log", time=T0 + 1)
    rv.append_message("c", "user", "unrelated words", time=T0 + 2)
    rv.create_conversation("ada", "G1", conversation_id="g")
    rv.append_message("g", "user", "billing in a group", time=T0)
    assert [(h.conversation, h.start, h.end) for h in rv.context_search("ada", "billing")] == [
        ("c", 0, 1)
    ]
    assert rv.context_search("ada", "") == []
    # the scan rule of memory search: word forms, the speaker, text over several lines
    rv.append_message("c", "user", "first line\nthe deploys went out", time=T0 + 3)
    assert [h.start for h in rv.context_search("ada", "deploy")] == [3, 0]  # ties: newest first
    assert [h.start for h in rv.context_search("ada", "caroline")] == [0]
    assert [h.start for h in rv.context_search("ada", "line deploys")] == [3, 0]


def test_long_messages_give_an_excerpt_around_the_match(hv: Reverie) -> None:
    text = "filler " * 200 + "the kraken surfaced" + " filler" * 200
    hv.append_message("hobbies", "user", text, time=T0 + 5)
    hit = hv.context_search("ada", "kraken")[0]
    assert "kraken" in hit.excerpt and len(hit.excerpt) <= fts.EXCERPT_CHARS + 2
    assert hit.excerpt.startswith("…") and hit.excerpt.endswith("…")
