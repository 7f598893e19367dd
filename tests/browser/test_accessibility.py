"""The pages are accessible and fit the screens they run on: every control has a name, the
keyboard reaches every control in reading order with a visible focus, text contrast meets
WCAG 2.1 AA (4.5:1, 3:1 for large text; disabled controls are exempt, as WCAG says), and
nothing scrolls sideways at station and tablet sizes."""

from __future__ import annotations

import pytest

from tests.browser.conftest import STATION, TABLET

expect = pytest.importorskip("playwright.sync_api").expect

PORTRAIT = {"width": 800, "height": 1280}

# Runs in the page: every problem found, as text (an empty list when there is none).
AUDIT = """() => {
  const problems = [];
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none";
  };
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    " '" + (el.textContent || "").trim().slice(0, 30) + "'";

  // 1. Names: every control says what it is.
  for (const el of document.querySelectorAll("button, input, select, textarea, a[href]")) {
    if (!visible(el) || el.type === "hidden") continue;
    const labelled = el.getAttribute("aria-label") || el.getAttribute("aria-labelledby") ||
      (el.labels && el.labels.length) || (el.textContent || "").trim() || el.title;
    if (!labelled) problems.push("no accessible name: " + describe(el));
  }

  // 2. Contrast of text against the first opaque background behind it.
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el) => {
    for (let n = el; n; n = n.parentElement) {
      const c = rgb(getComputedStyle(n).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] === 1)) return c.slice(0, 3);
      if (getComputedStyle(n).backgroundImage !== "none") return null; // a gradient: skip
    }
    return [255, 255, 255];
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!el || seen.has(el) || !walker.currentNode.textContent.trim() || !visible(el)) continue;
    seen.add(el);
    if (el.closest("button:disabled, input:disabled, select:disabled, [aria-disabled=true]"))
      continue;
    const s = getComputedStyle(el);
    const bg = background(el);
    if (!bg || parseFloat(s.opacity) === 0) continue;
    const fg = rgb(s.color).slice(0, 3);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    const size = parseFloat(s.fontSize);
    const large = size >= 24 || (size >= 18.66 && parseInt(s.fontWeight, 10) >= 700);
    if (ratio < (large ? 3 : 4.5))
      problems.push("contrast " + ratio.toFixed(2) + ": " + describe(el));
  }

  // 3. Nothing wider than the screen.
  if (document.documentElement.scrollWidth > window.innerWidth + 1)
    problems.push("scrolls sideways: " + document.documentElement.scrollWidth + "px");
  return problems;
}"""


def focus_order(page, limit=120):
    """Tab through the page: the focused elements in order, each checked for a visible focus
    indicator (an outline or a box shadow)."""
    order, unseen = [], []
    # Start from the top of the document, as after the page loads.
    page.evaluate(
        "() => { const d = document.documentElement; d.tabIndex = -1; d.focus(); "
        "d.removeAttribute('tabindex'); }"
    )
    for _ in range(limit):
        page.keyboard.press("Tab")
        info = page.evaluate(
            """() => {
              const el = document.activeElement;
              if (!el || el === document.body) return null;
              const s = getComputedStyle(el);
              const shown = (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) ||
                s.boxShadow !== "none";
              const r = el.getBoundingClientRect();
              return {key: el.id || el.textContent.trim().slice(0, 20), shown: shown,
                      top: r.top + window.scrollY, left: r.left};
            }"""
        )
        if info is None or (order and info["key"] == order[0]["key"]):
            break
        order.append(info)
        if not info["shown"]:
            unseen.append(info["key"])
    return order, unseen


def audit(page):
    return page.evaluate(AUDIT)


@pytest.mark.parametrize("size", [STATION, PORTRAIT], ids=["station", "portrait"])
def test_the_station_page_is_accessible(server, demo, station_page, size):
    from rounds.writer import open_round

    page = station_page(size)
    credential = demo.station_credentials["s1"]
    page.goto(f"{server}/tables/{demo.table.pk}/stations/s1/#credential={credential}")
    expect(page.locator("#connection")).to_have_text("Connected")
    open_round(demo.table)  # bets are open: the betting spots and their buttons are live
    expect(page.locator("#phase")).to_have_text("Place your bets")
    page.get_by_label("Cash-in amount").fill("50")
    page.get_by_role("button", name="Cash in", exact=True).click()
    expect(page.locator("#credits")).to_have_text("$50.00")
    assert audit(page) == []
    order, unseen = focus_order(page)
    keys = [o["key"] for o in order]
    assert keys[0] == "Skip to content"  # the first stop skips to the table
    # Every live control is reachable: 3 boxes x 5 spots + bet all + let it play, 5 chips,
    # the cash-in field and buttons; the table's controls come before the money's.
    assert len(order) >= 25
    assert keys.index("$1✓") < keys.index("cash-in-amount")
    assert unseen == []  # and each shows where the focus is


def test_the_croupier_tablet_is_accessible(server, demo, station_page):
    page = station_page(TABLET)
    page.goto(f"{server}/croupier/login/")
    assert audit(page) == []
    page.get_by_label("Username").fill("dealer")
    page.get_by_label("Password").fill(demo.logins["dealer"])
    page.get_by_role("button", name="Log in", exact=True).click()
    page.get_by_role("link", name=demo.table.name).click()
    expect(page.locator("#connection")).to_have_text("Connected")
    page.get_by_role("button", name="Open table", exact=True).click()
    expect(page.locator("#prompt")).to_have_text("close bets")
    assert audit(page) == []
    order, unseen = focus_order(page)
    keys = [o["key"] for o in order]
    # Reading order: the table's commands before the manual card form before supervisors.
    assert keys.index("close-bets") < keys.index("manual-rank") < keys.index("manual-submit")
    assert unseen == []
