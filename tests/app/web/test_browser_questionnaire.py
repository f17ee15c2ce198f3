"""The questionnaire in Chromium, at desktop and phone size: the facets' own questions and choices, a result
that reads like a chat verdict ("Read as" from the answers' labels), updated when an answer changes, each
answer a link back to its question, human labels only, in the UI's language.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from app.web.i18n import question_choices, question_label
from core.settings import Settings
from core.situation import facets
from tests.app.web.browser_kit import DESKTOP, PHONE, article_settings, chromium, launched, open_page, shot

pytestmark = pytest.mark.browser
SIZES = {"desktop": DESKTOP, "phone": PHONE}
RAW = ("training_and_serving", "on_prem", "training_speed_cost", "hpc_experience", "ops_team", "one_platform")
RAW_ARROWS = ("→ kubernetes", "→ slurm", "→ hybrid")
WAIT_MS = 60_000


@pytest.fixture(params=list(SIZES))
def sized(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[BrowserContext, tuple[int, int]]]:
    size = SIZES[request.param]
    for context in chromium(tmp_path, size):
        yield context, size


def _choose(page: Page, facet: str, label: str) -> None:
    page.locator(f"#q-{facet}").get_by_label(label, exact=True).check()


def _human_only(page: Page) -> None:
    text = page.locator("body").inner_text()
    for raw in (*RAW, *RAW_ARROWS):
        assert raw not in text, raw


def test_the_form_asks_every_facet_with_its_own_labels(
    settings: Settings, tmp_path: Path, browser: BrowserContext
) -> None:
    art = article_settings(settings, tmp_path)
    with launched(art) as url:
        page = open_page(browser, url)
        page.get_by_role("tab", name="Which platform?").click()
        assert len(facets().order) == 7
        for facet in facets().order:  # all seven, one_platform included
            field = page.locator(f"#q-{facet}")
            expect(field).to_contain_text(question_label(facet, "en"))
            labels = [label for label, _ in question_choices(facet, "en")]
            expect(field.locator("label")).to_have_text(labels)
        expect(page.locator("#q-one_platform")).to_contain_text("One platform for everything")
        page.get_by_label("日本語").check()
        expect(page.locator("#q-deployment")).to_contain_text("実行環境")
        expect(page.locator("#q-deployment label")).to_have_text(
            [lbl for lbl, _ in question_choices("deployment", "ja")]
        )
        _human_only(page)


def test_the_result_reads_as_the_answers_and_follows_each_change(
    settings: Settings, tmp_path: Path, sized: tuple[BrowserContext, tuple[int, int]], shots: Path
) -> None:
    context, (width, _) = sized
    art = article_settings(settings, tmp_path)
    with launched(art) as url:
        page = open_page(context, url)
        page.get_by_role("tab", name="Which platform?").click()
        for facet, label in (("deployment", "Cloud"), ("fleet", "Elastic fleet"), ("workload", "Training and serving")):
            _choose(page, facet, label)
        page.click("#recommend")
        result = page.locator("#recommendation")
        line = result.locator(".verdict-line")
        expect(line).to_have_count(1, timeout=WAIT_MS)
        expect(result.locator(".verdict")).to_have_count(1)
        expect(line).to_contain_text("Recommendation:")
        chips = line.locator("a.facet-edit")
        expect(chips).to_have_text(["cloud ✎", "elastic fleet ✎", "training and serving ✎"])
        expect(result.locator("ul.reasons li", has_text="Where it runs:").first).to_contain_text("cloud → Kubernetes")
        shot(page, shots, f"questionnaire-read-as-{width}")
        # Changing an answer updates the result by itself.
        _choose(page, "workload", "Training only")
        expect(chips).to_have_text(["cloud ✎", "elastic fleet ✎", "training only ✎"], timeout=WAIT_MS)
        expect(result.locator("ul.reasons")).not_to_contain_text("training and serving")
        # An answer in "Read as" takes the user to its question.
        chips.first.click()
        field = page.locator("#q-deployment")
        expect(field).to_be_in_viewport(ratio=0.9)  # scrolled to, whole
        expect(field.locator("input:focus")).to_have_count(1)
        result.locator("details.why summary").click()
        expect(result.locator("ul.changes li").first).to_be_visible()
        _human_only(page)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        shot(page, shots, f"questionnaire-changed-{width}")


def test_no_platform_yet_asks_for_the_facts_and_a_language_switch_says_it_again(
    settings: Settings, tmp_path: Path, browser: BrowserContext, shots: Path
) -> None:
    art = article_settings(settings, tmp_path)
    with launched(art) as url:
        page = open_page(browser, url)
        page.get_by_role("tab", name="Which platform?").click()
        page.click("#recommend")  # nothing answered yet
        result = page.locator("#recommendation")
        expect(result.locator(".verdict")).to_have_text("No platform yet", timeout=WAIT_MS)
        expect(result.locator(".needs")).to_contain_text("To recommend a platform, tell me: where it runs, GPU fleet")
        expect(result.locator(".read-as")).to_contain_text("nothing answered yet")
        _choose(page, "deployment", "On-prem")
        expect(result.locator(".verdict")).to_have_text("Slurm", timeout=WAIT_MS)
        expect(result.locator(".needs")).to_have_count(0)
        page.get_by_label("日本語").check()
        expect(result.locator(".verdict-line")).to_contain_text("推奨:", timeout=WAIT_MS)
        expect(result.locator("a.facet-edit")).to_have_text(["オンプレミス ✎"])
        expect(result).not_to_contain_text("Recommendation")
        shot(page, shots, "questionnaire-ja")
        _human_only(page)
