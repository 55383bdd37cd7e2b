"""The admin page in a real browser (SPEC A1, I2): headless Chromium (Debian's package) driven by
Playwright's Python client, no browser download. Sign in, edit and save memory, a stale save
from a second tab, load the latest, discard, approve an instruction change; a screenshot of each
page goes to ``build/screenshots/``.

Under CI a missing browser fails the run: it is never a skip there (``.ci/run`` installs the
``chromium`` package when it is missing)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.server.conftest import Live

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "screenshots"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing: install Debian's chromium package (.ci/run does).")
        pytest.skip("Chromium is not installed here (apt-get install chromium); CI runs this.")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def sign_in(live: Live, browser: Browser, member: str = "cy") -> Page:
    code = live.rv.sign_in_code(member)
    page = browser.new_context().new_page()
    page.goto(f"{live.base}/admin/signin/{code}")
    if page.locator("#sign-in").count():  # opening the link spends nothing; the button does
        page.locator("#sign-in").click()
    expect(page).to_have_url(f"{live.base}/admin/")
    return page


def test_sign_in_edit_save_stale_save_load_latest_and_discard(live: Live, browser: Browser) -> None:
    page = browser.new_context().new_page()
    page.goto(f"{live.base}/admin/")
    expect(page).to_have_url(f"{live.base}/admin/login")
    shot(page, "01-login")
    page = sign_in(live, browser)
    expect(page.get_by_role("link", name="ada")).to_be_visible()
    shot(page, "02-agents")

    page.get_by_role("link", name="ada").click()
    expect(page.locator("#revision")).to_have_text("0")
    expect(page.locator(".reach")).to_contain_text("every DM")
    editor = page.locator("#body")
    editor.fill(
        editor.input_value().replace("## Decisions\n", "## Decisions\n- We deploy on Tuesdays.\n")
    )
    page.locator("#save").click()
    expect(page.get_by_role("status")).to_have_text("Saved as revision 1.")
    expect(page.locator("#revision")).to_have_text("1")
    assert "- We deploy on Tuesdays." in live.rv.memory_read("ada").text
    shot(page, "03-memory-saved")

    # Two tabs at revision 1; the second saves first.
    other = page.context.new_page()
    other.goto(f"{live.base}/admin/agents/ada")
    other.locator("#body").fill(
        other.locator("#body").input_value() + "- Billing runs on Fridays.\n"
    )
    other.locator("#save").click()
    expect(other.get_by_role("status")).to_have_text("Saved as revision 2.")
    mine = page.locator("#body").input_value() + "- Staging is down on Mondays.\n"
    page.locator("#body").fill(mine)
    page.locator("#save").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("the memory changed while you edited it")
    expect(page.locator("#current-revision")).to_have_text("2")
    expect(page.get_by_role("status")).to_have_count(0)  # no "saved" notice on a refusal
    assert page.locator("#body").input_value() == mine  # the draft is kept
    assert "Staging" not in live.rv.memory_read("ada").text
    shot(page, "04-memory-stale-save")
    page.locator("#load-latest").click()
    expect(page.locator("#revision")).to_have_text("2")
    assert "- Billing runs on Fridays." in page.locator("#body").input_value()
    assert "Staging" not in page.locator("#body").input_value()

    # Discard puts back what was loaded.
    loaded = page.locator("#body").input_value()
    page.locator("#body").fill("scribbles")
    page.locator("#discard").click()
    assert page.locator("#body").input_value() == loaded

    # An empty save clears the memory, once the browser's confirmation is accepted.
    asked: list[str] = []
    page.once("dialog", lambda d: (asked.append(d.message), d.accept()))
    page.locator("#body").fill("")
    page.locator("#save").click()
    expect(page.get_by_role("status")).to_have_text("Saved as revision 3.")
    assert asked and "clears MEMORY.md" in asked[0]
    assert live.rv.memory_read("ada").text == ""


def test_history_diff_search_conversations_reviews_pages(live: Live, browser: Browser) -> None:
    rv = live.rv
    rv.memory_apply(
        "ada",
        {
            "operations": [
                {"action": "add", "text": "We deploy on Tuesdays.", "section": "Decisions"},
                {
                    "action": "write_topic",
                    "topic": "deploys",
                    "content": "# Deploys\n- make release\n",
                },
            ]
        },
    )
    rv.ensure_channel("D1", "dm")
    rv.ensure_channel("G1", "group")
    conv = rv.create_conversation("ada", "D1", title="Tea").id
    rv.append_message(conv, "user", "I prefer tea over coffee.", author="sam")
    rv.close_conversation(conv)
    rv.create_conversation("ada", "G1", title="Group chat")
    rv.review_run("ada", force=True)
    page = sign_in(live, browser)
    page.goto(f"{live.base}/admin/agents/ada/history")
    expect(page.get_by_role("link", name="1", exact=True)).to_be_visible()
    shot(page, "05-history")
    page.get_by_role("link", name="1", exact=True).click()
    expect(page.locator(".diff .add").first).to_be_visible()
    shot(page, "06-revision-diff")
    page.goto(f"{live.base}/admin/agents/ada/topics/deploys")
    expect(page.locator("pre.file")).to_contain_text("make release")
    page.goto(f"{live.base}/admin/agents/ada/search?q=deploy")
    expect(page.locator(".hits li").first).to_contain_text("deploy")
    shot(page, "07-search")
    page.goto(f"{live.base}/admin/agents/ada/conversations")
    expect(page.locator(".mode-off")).to_contain_text("off")
    expect(page.locator(".mode-on")).to_contain_text("on")
    shot(page, "08-conversations")
    page.goto(f"{live.base}/admin/agents/ada/reviews")
    expect(page.locator("table")).to_contain_text(f"{conv}#0-1")
    shot(page, "09-reviews")


def test_approve_an_instruction_change(live: Live, browser: Browser) -> None:
    rv = live.rv
    rv.ensure_channel("D-sam", "dm")
    conv = rv.create_conversation("ada", "D-sam").id
    a = rv.propose_instructions(conv, "Answer in bullet points.", author="sam")
    b = rv.propose_instructions(conv, "Shout.", author="sam")
    page = sign_in(live, browser)
    expect(page.locator("#nav-approvals .badge")).to_have_text("2")
    page.goto(f"{live.base}/admin/approvals")
    shot(page, "10-approvals")
    page.locator(f"#{a.id} .approve").click()
    expect(page.get_by_role("status")).to_have_text(f"{a.id} approved.")
    assert rv.channel_instructions("ada", "D-sam").text == "Answer in bullet points."
    page.locator(f"#{b.id} input[name=text]").fill("Why would we?")
    page.locator(f"#{b.id} button", has_text="Comment").click()
    expect(page.locator("#no-approvals")).to_be_visible()
    assert rv.approval(b.id).comment == "Why would we?"
    shot(page, "11-approvals-done")


def test_forms_need_the_csrf_token_and_the_right_to_edit(live: Live, browser: Browser) -> None:
    page = sign_in(live, browser, "sam")
    expect(page.get_by_text("(you may not edit it)")).to_be_visible()
    page.goto(f"{live.base}/admin/agents/ada")
    expect(page.get_by_role("alert")).to_contain_text("permission_denied")
    shot(page, "12-refused")
    # A form posted from elsewhere (no CSRF token) changes nothing, even for an editor.
    editor = sign_in(live, browser, "cy")
    r = editor.request.post(
        f"{live.base}/admin/agents/ada/memory",
        form={"body": "# Hijacked\n", "expected_revision": "0"},
    )
    assert r.status == 403 and "csrf_failed" in r.text()
    assert live.rv.memory_read("ada").revision == 0


def test_a1_a_stale_draft_is_saved_over_the_newest_revision_knowingly(
    live: Live, browser: Browser
) -> None:
    """A1: after a stale save, "Save over revision N" saves the kept draft (Load latest stays
    the other choice), and the page links to what changed since the draft's base."""
    page = sign_in(live, browser)
    page.goto(f"{live.base}/admin/agents/ada")
    draft = page.locator("#body").input_value() + "- Mine, on purpose.\n"
    page.locator("#body").fill(draft)
    live.rv.memory_apply("ada", {"action": "add", "text": "Theirs, meanwhile."})
    page.locator("#save").click()
    expect(page.locator("#current-revision")).to_have_text("1")
    expect(page.locator("#load-latest")).to_be_visible()
    expect(page.locator("#changes")).to_have_attribute("href", "/admin/agents/ada/compare/0/1")
    shot(page, "13-memory-stale-save-over")
    page.locator("#save-over").click()
    expect(page.get_by_role("status")).to_have_text("Saved as revision 2.")
    assert live.rv.memory_read("ada").text == draft


def test_a1_a_refused_save_keeps_the_draft_behind_back(live: Live, browser: Browser) -> None:
    """A1: a save too large for the form parser (over 1 MB) is a page, 413, that says the
    limit of MEMORY.md and that Back keeps the draft; and Back does."""
    page = sign_in(live, browser)
    page.goto(f"{live.base}/admin/agents/ada")
    draft = "- a long draft\n" + "x" * (1024 * 1024 + 10)
    page.locator("#body").fill(draft)
    with page.expect_navigation() as nav:
        page.locator("#save").click()
    assert nav.value is not None and nav.value.status == 413
    expect(page.get_by_role("alert")).to_contain_text("form_too_large")
    limit = f"{live.rv.settings.max_index_bytes:,} bytes"
    expect(page.locator("#hint")).to_contain_text(limit)
    expect(page.locator("#hint")).to_contain_text("Back button returns to the page with your draft")
    shot(page, "14-memory-too-large")
    page.go_back()
    expect(page.locator("#body")).to_have_value(draft)
    assert live.rv.memory_read("ada").revision == 0


def test_a1_an_empty_save_asks_first_and_clears_topic_files(live: Live, browser: Browser) -> None:
    """A1: emptying the editor and saving asks for confirmation, naming the topic files it
    deletes; refusing saves nothing, accepting clears the memory in one revision."""
    live.rv.memory_apply(
        "ada",
        {
            "operations": [
                {"action": "add", "text": "We deploy on Tuesdays."},
                {"action": "write_topic", "topic": "deploys", "content": "# Deploys\nmake\n"},
            ]
        },
    )
    page = sign_in(live, browser)
    page.goto(f"{live.base}/admin/agents/ada")
    page.locator("#body").fill("")
    asked: list[str] = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.locator("#save").click()
    page.wait_for_timeout(300)
    assert asked and "MEMORY.md and its 1 topic file" in asked[0]
    assert live.rv.memory_read("ada").revision == 1 and page.locator("#body").input_value() == ""
    page.once("dialog", lambda d: d.accept())
    page.locator("#save").click()
    expect(page.get_by_role("status")).to_have_text("Saved as revision 2.")
    expect(page.locator("#topics")).to_have_count(0)
    assert live.rv.memory_files("ada") in ([], ["MEMORY.md"])


def test_a1_pages_fit_a_phone_screen(live: Live, browser: Browser) -> None:
    """A1: at 375 px wide no page is wider than the screen: tables and the tab bar scroll
    sideways inside the page."""
    rv = live.rv
    rv.ensure_channel("D1", "dm")
    conv = rv.create_conversation("ada", "D1", title="A conversation with a long title").id
    rv.append_message(conv, "user", "I prefer tea over coffee.", author="sam")
    rv.memory_apply("ada", {"action": "add", "text": "We deploy on Tuesdays."})
    page = sign_in(live, browser)
    page.set_viewport_size({"width": 375, "height": 800})
    for path in [
        "/admin/",
        "/admin/agents/ada",
        "/admin/agents/ada/history",
        "/admin/agents/ada/conversations",
        "/admin/agents/ada/reviews",
    ]:
        page.goto(f"{live.base}{path}")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, (path, width)
    shot(page, "15-phone-reviews")
