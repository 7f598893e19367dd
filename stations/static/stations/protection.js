/*
 * Player protection on the reference station page (docs/protocol.md, "Session and limits"):
 * an ES module of its own beside station.js.
 *
 * The session bar shows, at all times, the session's elapsed time (counted with the
 * server's clock) and its net position; the limits panel shows the player's limits and the
 * jurisdiction's maxima and sets new ones; the reality check and the inactivity question,
 * when the state says one is open, cover the page until the player answers; a break is
 * taken from here and shown until it ends. It draws from the station's state only, which
 * station.js hands over with a "station:state" event on the station's element, and sends
 * its commands through station.js's socket with a "station:send" event: the server decides
 * every limit, this page only shows what the state says.
 */
import { format, gettext, LANGUAGE, moneyFormat } from "../tablehub/i18n.js";

const root = document.getElementById("station");

const STOPPED = {
  time_limit_reached: gettext("Betting stopped: the session's time limit is reached. Cash out to end it."),
  loss_limit_reached: gettext("Betting stopped: the session's loss limit is reached. Cash out to end it."),
};

let session = null;
let onBreak = null;
let checkTimer = null;
let idleTimer = null;
let breakTimer = null;
let historyWanted = false;
let clockOffset = 0; // server time - this clock, in ms
let money = null;

function $(id) {
  return document.getElementById(id);
}

function formatMoney(value) {
  if (value === null || value === undefined) return "–";
  return money ? money.format(Number(value)) : String(value);
}

function formatNet(value) {
  const number = Number(value);
  const text = formatMoney(Math.abs(number));
  if (number > 0) return `+${text}`;
  if (number < 0) return `−${text}`;
  return text;
}

function formatElapsed(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const two = (n) => String(n).padStart(2, "0");
  return `${h}:${two(m)}:${two(s)}`;
}

function onState(event) {
  const state = event.detail;
  if (state.info?.currency) {
    money = moneyFormat(state.info.currency, false);
  }
  if (state.server_time) clockOffset = Date.parse(state.server_time) - Date.now();
  session = state.session || null;
  onBreak = state.break || null;
  render();
  if (historyWanted && !session?.reality_check?.open) {
    historyWanted = false;
    document.getElementById("history-heading")?.scrollIntoView();
  }
}

function render() {
  renderBreak();
  renderInactivity();
  const bar = $("session-bar");
  bar.dataset.open = session ? "true" : "false";
  const net = $("session-net");
  if (!session) {
    $("session-time").textContent = gettext("No session");
    net.textContent = "–";
    net.dataset.sign = "";
    $("session-cash-in").textContent = "–";
    $("session-stopped").textContent = onBreak ? breakText(onBreak) : "";
    $("limits-now").textContent = gettext("Cash in to set limits for the session.");
    renderRealityCheck();
    return;
  }
  const value = Number(session.net);
  net.textContent = formatNet(session.net);
  net.dataset.sign = value > 0 ? "up" : value < 0 ? "down" : "";
  $("session-cash-in").textContent = formatMoney(session.cash_in);
  $("session-stopped").textContent = session.stopped ? STOPPED[session.stopped] || "" : "";
  $("limits-now").textContent = limitsText(session.limits, session.maxima);
  renderRealityCheck();
  tick();
}

// The reality check (docs/protocol.md, "Session and limits"): shown while the state says it
// is open; when its time comes the page asks for the state (the server opens it between
// rounds only).
function renderRealityCheck() {
  const dialog = $("reality-check");
  const check = session ? session.reality_check : null;
  checkTimer = askStateAt(checkTimer, check && !check.open ? check.due_at : null);
  const open = Boolean(check?.open);
  const wasOpen = !dialog.hidden;
  dialog.hidden = !open;
  if (!open) return;
  const elapsed = Date.now() + clockOffset - Date.parse(session.started_at);
  $("reality-check-text").textContent =
    format(gettext("You have played for %(time)s this session. Betting resumes once you answer."), {
      time: formatElapsed(elapsed),
    });
  $("reality-check-time").textContent = formatElapsed(elapsed);
  $("reality-check-net").textContent = formatNet(session.net);
  $("reality-check-staked").textContent = formatMoney(session.staked);
  $("reality-check-won").textContent = formatMoney(session.won);
  if (!wasOpen) dialog.querySelector("button").focus();
}

// When a moment of the server's clock comes, ask for the state (what the server decides
// then: a reality check, an inactivity question or lock, the end of a break).
function askStateAt(timer, when) {
  clearTimeout(timer);
  if (!when) return null;
  const wait = Date.parse(when) - (Date.now() + clockOffset);
  return wait >= 0 ? setTimeout(askState, wait + 250) : null;
}

function breakText(taken) {
  const until = new Date(Date.parse(taken.until) - clockOffset);
  const shown = until.toLocaleString(LANGUAGE, {
    weekday: "short", hour: "2-digit", minute: "2-digit",
  });
  return format(gettext("On a break until %(time)s: no cash-in and no bet until then."), {
    time: shown,
  });
}

function renderBreak() {
  breakTimer = askStateAt(breakTimer, onBreak ? onBreak.until : null);
  root.dataset.onBreak = onBreak ? "true" : "false";
  $("break-form").querySelector("button").disabled = Boolean(onBreak);
}

function renderInactivity() {
  const idle = session ? session.inactivity : null;
  const dialog = $("inactivity");
  const next = idle && !idle.asking && !idle.locked ? idle.asks_at : idle?.asking ? idle.locks_at : null;
  idleTimer = askStateAt(idleTimer, next);
  const open = Boolean(idle && (idle.asking || idle.locked));
  const wasOpen = !dialog.hidden;
  dialog.hidden = !open;
  if (!open) return;
  $("inactivity-text").textContent = idle.locked
    ? gettext("Betting is locked: nobody has played here for a while. Your credits are safe.")
    : gettext("Nobody has played here for a while. Betting locks in a minute unless you answer.");
  if (!wasOpen) $("still-here").focus();
}

function onBreakSubmit(event) {
  event.preventDefault();
  const minutes = Number($("break-minutes").value);
  const detail = { type: "take_break", fields: { minutes: minutes } };
  root.dispatchEvent(new CustomEvent("station:send", { detail: detail }));
}

function askState() {
  root.dispatchEvent(new CustomEvent("station:send", { detail: { type: "state" } }));
}

function onAnswer(answer) {
  historyWanted = answer === "history";
  const detail = { type: "reality_check", fields: { answer: answer } };
  root.dispatchEvent(new CustomEvent("station:send", { detail: detail }));
}

function limitsText(limits, maxima) {
  const parts = [];
  if (limits.loss_limit) {
    parts.push(format(gettext("loss %(amount)s"), { amount: formatMoney(limits.loss_limit) }));
  }
  if (limits.stake_limit) {
    parts.push(format(gettext("%(amount)s per round"), { amount: formatMoney(limits.stake_limit) }));
  }
  if (limits.time_limit) parts.push(format(gettext("%(minutes)s min"), { minutes: limits.time_limit }));
  let text = parts.length
    ? format(gettext("Your limits: %(limits)s."), { limits: parts.join(", ") })
    : gettext("No limits set.");
  const table = [];
  if (maxima.stake_limit) {
    table.push(format(gettext("%(amount)s per round"), { amount: formatMoney(maxima.stake_limit) }));
  }
  if (maxima.time_limit) {
    table.push(format(gettext("%(minutes)s min a session"), { minutes: maxima.time_limit }));
  }
  if (table.length) {
    text += ` ${format(gettext("Table maximum: %(limits)s."), { limits: table.join(", ") })}`;
  }
  return text;
}

function tick() {
  if (!session) return;
  const text = formatElapsed(Date.now() + clockOffset - Date.parse(session.started_at));
  const node = $("session-time");
  if (node.textContent !== text) node.textContent = text;
}

function onSubmit(event) {
  event.preventDefault();
  const fields = {};
  const amount = /^[0-9]+([.,][0-9]{1,2})?$/;
  for (const [name, id] of [["loss_limit", "limit-loss"], ["stake_limit", "limit-stake"]]) {
    const value = $(id).value.trim();
    if (!value) continue;
    if (!amount.test(value)) {
      $(id).setCustomValidity(gettext("Enter an amount such as 50 or 12.50."));
      $(id).reportValidity();
      return;
    }
    $(id).setCustomValidity("");
    fields[name] = value.replace(",", ".");
  }
  const minutes = $("limit-time").value.trim();
  if (minutes) {
    if (!/^[1-9][0-9]*$/.test(minutes)) {
      $("limit-time").setCustomValidity(gettext("Enter whole minutes, such as 60."));
      $("limit-time").reportValidity();
      return;
    }
    $("limit-time").setCustomValidity("");
    fields.time_limit = Number(minutes);
  }
  if (!Object.keys(fields).length) return;
  root.dispatchEvent(new CustomEvent("station:send", { detail: { type: "set_limits", fields } }));
  event.target.reset();
}

const PLAYS = {
  hit: gettext("Hit"), stand: gettext("Stand"), double: gettext("Double"),
  double_half: gettext("Double for less"), split: gettext("Split"),
  surrender: gettext("Surrender"),
};

// An abandoned hand played for the station by the table's basic strategy (docs/protocol.md,
// the "hand" event's "automatic"): said in the session bar until the next round.
function onEvent(event) {
  if (event.type === "hand" && event.automatic) {
    const play = PLAYS[event.automatic] || event.automatic;
    $("automatic-play").textContent =
      format(gettext("Played for you (automatic): %(play)s on box %(box)s."), {
        play: play, box: event.hand.box,
      });
  } else if (event.type === "phase" && event.phase === "betting") {
    $("automatic-play").textContent = "";
  }
}

// Game recall (docs/protocol.md, "Recall"): the reply's games, under the recall banner.
const BY = {
  player: gettext("you"), timer: gettext("the timer"),
  strategy: gettext("automatic (basic strategy)"),
};

function onReply(detail) {
  const frame = detail.frame;
  if (!frame.ok || !frame.recall || detail.command?.type !== "recall") return;
  const list = $("recall-games");
  list.textContent = "";
  if (!frame.recall.games.length) {
    const empty = document.createElement("li");
    empty.textContent = gettext("No game to recall yet.");
    list.append(empty);
  }
  for (const game of frame.recall.games) list.append(gameNode(game));
  $("recall").hidden = false;
  $("recall-close").focus();
}

function line(text) {
  const p = document.createElement("p");
  p.textContent = text;
  return p;
}

function gameNode(game) {
  const item = document.createElement("li");
  item.className = "recall-game";
  const heading = document.createElement("h3");
  heading.textContent = game.phase === "void"
    ? format(gettext("Round %(number)s (void)"), { number: game.round })
    : format(gettext("Round %(number)s"), { number: game.round });
  item.append(heading);
  item.append(
    line(format(gettext("Credits %(before)s → %(after)s"), {
      before: formatMoney(game.credits_before), after: formatMoney(game.credits_after),
    }))
  );
  const none = gettext("none");
  const bets = game.bets.map((b) => format(gettext("box %(box)s %(bet)s %(amount)s"), {
    box: b.box, bet: b.bet, amount: formatMoney(b.stake),
  }));
  item.append(line(format(gettext("Wagers: %(list)s"), { list: bets.join(", ") || none })));
  item.append(line(format(gettext("Cards: %(list)s"), {
    list: game.cards.map((c) => c.card).join(" "),
  })));
  const steps = game.steps.map((s) => format(gettext("%(action)s by %(who)s"), {
    action: (PLAYS[s.action] || s.action).toLowerCase(), who: BY[s.by] || s.by,
  }));
  item.append(line(format(gettext("Decisions: %(list)s"), { list: steps.join("; ") || none })));
  const hands = game.hands.map(
    (h) => format(gettext("box %(box)s %(cards)s: %(result)s, %(amount)s back"), {
      box: h.box, cards: h.cards.join(" "), result: h.result || "–", amount: formatMoney(h.returned),
    })
  );
  item.append(line(format(gettext("Hands: %(list)s"), { list: hands.join("; ") })));
  if (game.dealer) {
    item.append(line(format(gettext("Dealer: %(cards)s (%(total)s)"), {
      cards: game.dealer.cards.join(" "), total: game.dealer.total,
    })));
  }
  return item;
}

if (root) {
  root.addEventListener("station:state", onState);
  root.addEventListener("station:reply", (event) => onReply(event.detail));
  $("recall-button").addEventListener("click", () => {
    root.dispatchEvent(new CustomEvent("station:send", { detail: { type: "recall" } }));
  });
  $("recall-close").addEventListener("click", () => {
    $("recall").hidden = true;
    $("recall-button").focus();
  });
  root.addEventListener("station:event", (event) => onEvent(event.detail));
  $("limits-form").addEventListener("submit", onSubmit);
  $("break-form").addEventListener("submit", onBreakSubmit);
  $("still-here").addEventListener("click", () => {
    root.dispatchEvent(new CustomEvent("station:send", { detail: { type: "still_here" } }));
  });
  $("reality-check")
    .querySelectorAll("[data-answer]")
    .forEach((button) => {
      button.addEventListener("click", () => onAnswer(button.dataset.answer));
    });
  setInterval(tick, 500);
}
