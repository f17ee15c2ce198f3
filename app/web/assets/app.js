// The page's small behaviours that Gradio has no component for. Loaded once, in <head>; every hook is
// delegated from `document`, so it keeps working as Gradio re-renders the chat.
(() => {
  if (window.__advisor) return;
  window.__advisor = true;

  // Copy: the chat's copy button copies a message's raw content (HTML). Each final answer carries its
  // plain text in a comment (render.with_copy_text); copy that instead.
  const clip = navigator.clipboard;
  if (clip && clip.writeText) {
    const write = clip.writeText.bind(clip);
    clip.writeText = (text) => {
      const m = /<!--plain:([A-Za-z0-9+\/=]+)-->/.exec(String(text));
      if (!m) return write(text);
      const bytes = Uint8Array.from(atob(m[1]), (c) => c.charCodeAt(0));
      return write(new TextDecoder().decode(bytes));
    };
  }

  // Citation jumps: scroll to the source and flash it (a repeated click on the same [n] does not
  // change :target, so :target alone would not show it again).
  const jump = (a) => {
    const target = document.getElementById(a.getAttribute("href").slice(1));
    if (!target) return false;
    target.scrollIntoView({ behavior: "smooth", block: "center" });
    document.querySelectorAll(".source.flash").forEach((el) => el.classList.remove("flash"));
    target.classList.add("flash");
    const details = target.querySelector("details");
    if (details) details.open = true;
    return true;
  };

  // Source titles open the source panel (a plain click; a modified click still opens the page).
  const setValue = (el, value) => {
    const proto = Object.getPrototypeOf(el);
    Object.getOwnPropertyDescriptor(proto, "value").set.call(el, value);
    el.dispatchEvent(new Event("input", { bubbles: true }));
  };
  const openSource = (a) => {
    const source = a.closest(".source[id^='src-']");
    const field = document.querySelector("#source-request textarea, #source-request input");
    const button = document.querySelector("#source-open");
    if (!source || !field || !button) return false;
    const m = /^src-(.+)-(\d+)$/.exec(source.id);
    if (!m) return false;
    setValue(field, `${m[1]}:${m[2]}`);
    setTimeout(() => button.click(), 0);
    return true;
  };

  // The questionnaire's "Read as": an answer's link takes the user to its question, focused and flashed.
  const editFacet = (a) => {
    const id = (a.getAttribute("href") || "").slice(1);  // "#q-deployment" (the sanitizer drops data-*)
    const field = id.startsWith("q-") ? document.getElementById(id) : null;
    if (!field) return false;
    field.scrollIntoView({ behavior: "smooth", block: "center" });
    const input = field.querySelector("input:checked") || field.querySelector("input");
    if (input) input.focus({ preventScroll: true });
    field.classList.remove("form-flash");
    void field.offsetWidth;  // restart the flash on a second click
    field.classList.add("form-flash");
    setTimeout(() => field.classList.remove("form-flash"), 1600);
    return true;
  };

  // Which message's buttons were last clicked (by position: Svelte replaces the button once it is
  // pressed): the comment box opens next to them.
  let ratedAt = -1;
  const ratedButtons = () => document.querySelectorAll("#chat .message-buttons")[ratedAt] || null;
  document.addEventListener("click", (event) => {
    const el = event.target;
    if (!el || !el.closest) return;
    const cite = el.closest('a[href^="#src-"]');
    if (cite && jump(cite)) { event.preventDefault(); return; }
    const title = el.closest(".source a.src-title");
    const plainClick = event.button === 0 && !event.ctrlKey && !event.metaKey && !event.shiftKey;
    if (title && plainClick && openSource(title)) { event.preventDefault(); return; }
    const facet = el.closest("#recommendation a.facet-edit");
    if (facet && editFacet(facet)) { event.preventDefault(); return; }
    const rate = el.closest("#chat .message-buttons");
    if (rate) ratedAt = [...document.querySelectorAll("#chat .message-buttons")].indexOf(rate);
  }, true);

  // While the source panel is open, Tab and Shift+Tab cycle through its own controls (a modal dialog).
  const trapFocus = (event) => {
    const panel = document.getElementById("source-panel");
    if (!panel || !panel.getClientRects().length || !panel.querySelector(".source-view")) return;
    const stops = [...panel.querySelectorAll(
      'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])'
    )].filter((el) => !el.disabled && el.getClientRects().length > 0);
    if (!stops.length) { event.preventDefault(); panel.focus(); return; }
    const first = stops[0];
    const last = stops[stops.length - 1];
    const at = document.activeElement;
    const inside = panel.contains(at);
    if (event.shiftKey && (!inside || at === first || at === panel)) { event.preventDefault(); last.focus(); }
    else if (!event.shiftKey && (!inside || at === last)) { event.preventDefault(); first.focus(); }
  };
  document.addEventListener("keydown", (event) => {
    if (event.key === "Tab") { trapFocus(event); return; }
    if (event.key !== "Escape") return;
    const close = document.querySelector("#source-panel #source-close");
    if (close) close.click();
  });

  // Accessibility: Gradio labels a message with its raw content, which for answers is HTML markup.
  const plainLabels = () => {
    document.querySelectorAll('#chat [data-testid="bot"][aria-label], #chat [data-testid="user"][aria-label]').forEach((m) => {
      const who = m.getAttribute("data-testid") === "bot" ? "bot" : "user";
      const text = `${who}'s message: ${(m.textContent || "").replace(/\s+/g, " ").trim()}`.slice(0, 500);
      if (m.getAttribute("aria-label") !== text) m.setAttribute("aria-label", text);
    });
  };

  // Gradio gives the empty chat's examples role="list" with buttons as children (no listitems): a group.
  const fixRoles = () => {
    document.querySelectorAll('#chat .examples[role="list"]').forEach((el) => {
      el.setAttribute("role", "group");
      el.setAttribute("aria-label", document.documentElement.lang === "ja" ? "質問例" : "Examples");
    });
  };

  // The live character count under the question box (its limit comes from the server's settings).
  const count = () => {
    const box = document.querySelector("#question textarea");
    const out = document.querySelector("#char-count .char-count");
    if (!box || !out) return;
    const limit = Number(out.dataset.limit || 0);
    const n = box.value.trim().length;
    const text = `${n.toLocaleString("en-US")} / ${limit.toLocaleString("en-US")}`;
    if (out.textContent !== text) out.textContent = text;
    out.classList.toggle("over", limit > 0 && n > limit);
  };
  document.addEventListener("input", count, true);

  // The comment box sits next to the rated answer's buttons (above them when there is no room below).
  const placeFeedback = () => {
    const box = document.getElementById("feedback-box");
    const anchor = ratedButtons();
    if (!box || !anchor) return;
    const r = anchor.getBoundingClientRect();
    const width = Math.min(420, window.innerWidth - 16);
    const left = Math.max(8, Math.min(r.left, window.innerWidth - width - 8));
    const height = box.getBoundingClientRect().height || 180;
    const below = r.bottom + 6;
    const top = below + height <= window.innerHeight - 8 ? below : Math.max(8, r.top - height - 6);
    const set = (name, value) => { if (box.style[name] !== value) box.style[name] = value; };
    set("left", `${left}px`);
    set("top", `${top}px`);
    set("width", `${width}px`);
  };
  document.addEventListener("scroll", placeFeedback, true);
  window.addEventListener("resize", placeFeedback);

  // The source panel: a dialog (Tab is trapped inside it: trapFocus). When a section arrives it takes focus and shows the highlighted quote
  // (scrolled into view vertically only: the panel never opens scrolled sideways); the page behind is dimmed
  // and locked on a phone (html.panel-open); closing gives focus back to the link that opened it.
  let shownPanel = "";
  let opener = null;
  document.addEventListener("focusin", (event) => {
    const el = event.target;
    if (el && el.closest && !el.closest("#source-panel")) opener = el;
  });
  const showHit = () => {
    const panel = document.getElementById("source-panel");
    const open = !!panel && panel.getClientRects().length > 0;
    const wasOpen = document.documentElement.classList.contains("panel-open");
    document.documentElement.classList.toggle("panel-open", open);
    document.documentElement.classList.toggle("panel-lock", open && window.matchMedia("(max-width: 640px)").matches);
    if (wasOpen && !open && opener && opener.isConnected) opener.focus({ preventScroll: true });
    const view = document.querySelector("#source-panel .source-view");
    if (!view || !open) { shownPanel = ""; return; }
    const key = view.outerHTML.length + ":" + view.getAttribute("data-n") + ":" + view.textContent.slice(0, 80);
    if (key === shownPanel) return;
    shownPanel = key;
    panel.setAttribute("role", "dialog");
    panel.setAttribute("aria-modal", "true");
    panel.setAttribute("aria-label", (view.querySelector(".sv-title") || view).textContent.trim().slice(0, 120));
    panel.setAttribute("tabindex", "-1");
    panel.focus({ preventScroll: true });
    panel.scrollLeft = 0;
    const hit = view.querySelector(".hit");
    if (hit) {
      const top = hit.getBoundingClientRect().top - panel.getBoundingClientRect().top;
      panel.scrollTop += top - panel.clientHeight / 3;
    }
  };

  // A new answer opens at its first line and stays there while it streams (Gradio's own autoscroll, off,
  // would pin the chat to the answer's last line: the sources). The user's own scrolling ends the pinning.
  let pinned = null;
  let pinnedCount = -1;
  let pinnedTop = -1;
  let pageMoved = false;
  const chatScroller = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const style = getComputedStyle(p);
      if (/(auto|scroll)/.test(style.overflowY) && p.scrollHeight > p.clientHeight) return p;
      if (p.id === "chat") break;
    }
    return null;
  };
  const pinAnswer = () => {
    const bots = document.querySelectorAll('#chat [data-testid="bot"]');
    const users = document.querySelectorAll('#chat [data-testid="user"]');
    if (bots.length < pinnedCount || !bots.length) { pinnedCount = bots.length; pinned = null; }
    // only an answer to a question asked now (a restored conversation opens where Gradio puts it)
    if (bots.length > pinnedCount && pinnedCount >= 0 && users.length) { pinned = bots.length - 1; pageMoved = false; }
    pinnedCount = bots.length;
    if (pinned === null) return;
    const bot = bots[pinned];
    const row = bot && (bot.closest(".message-row") || bot);
    const scroller = row && chatScroller(row);
    if (!scroller) return;
    const top = row.getBoundingClientRect().top - scroller.getBoundingClientRect().top;
    if (Math.abs(top) > 1) scroller.scrollTop += top;
    pinnedTop = scroller.scrollTop;
    // the page itself moves once, when the answer starts (later the user or a script may scroll it)
    const box = scroller.getBoundingClientRect();
    if (!pageMoved && (box.top < 0 || box.top > window.innerHeight * 0.6)) window.scrollBy(0, box.top - 8);
    pageMoved = true;
  };
  const unpin = (event) => { if (event.target.closest && event.target.closest("#chat")) pinned = null; };
  // Once the answer is complete, a scroll by anything else (a citation jump, a script) ends the pinning too.
  document.addEventListener("scroll", (event) => {
    const stop = document.getElementById("stop");
    const streaming = stop && stop.offsetParent !== null;
    if (pinned !== null && !streaming && event.target.closest && event.target.closest("#chat")
        && Math.abs(event.target.scrollTop - pinnedTop) > 2) pinned = null;
  }, true);
  ["wheel", "touchmove", "pointerdown"].forEach((name) => document.addEventListener(name, unpin, { capture: true, passive: true }));
  document.addEventListener("keydown", (event) => {
    if (["ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End", " "].includes(event.key)) unpin(event);
  }, true);

  let queued = false;
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      plainLabels();
      fixRoles();
      pinAnswer();
      count();
      placeFeedback();
      showHit();
    });
  }).observe(document.documentElement, { subtree: true, childList: true, attributes: true, attributeFilter: ["aria-label", "style", "class"] });
  // Gradio sets the question box's value without an input event (examples, a sent question): re-count.
  setInterval(count, 500);
})();
