/*
 * The stadium lobby on the reference station page (docs/protocol.md, "Stadium lobby"): an
 * ES module of its own beside station.js, drawn only where the station belongs to a stadium.
 *
 * The "Tables of <stadium>" panel lists the stadium's tables with their mode, rules,
 * limits, players and dealer (the `tables` message, sent when the panel opens and on
 * "Refresh"), and a "Move here" button on each other open table; while the station has
 * bets on its table's open round the buttons are disabled and the panel says why (the
 * server refuses such a move anyway: `bets_unsettled`). A move's reply is station.js's to
 * follow (it goes to the new table's station page with the credential); this module sends
 * its commands through station.js's socket with a "station:send" event and reads the
 * state and the replies from the "station:state" and "station:reply" events.
 */
import { format, gettext, moneyFormat, ngettext } from "../tablehub/i18n.js";

const root = document.getElementById("station");
const panel = document.getElementById("lobby");

const MODES = {
  dealer: gettext("Live dealer"),
  video: gettext("Video"),
};
const PLAYS = {
  common_draw: gettext("common draw"),
  seat: gettext("seat mode"),
};

let tables = null;
let state = null;
let moving = false;

function $(id) {
  return document.getElementById(id);
}

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  Object.entries(attrs || {}).forEach(([name, value]) => {
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value);
  });
  (children || []).forEach((child) => {
    node.appendChild(child);
  });
  return node;
}

function send(type, fields) {
  root.dispatchEvent(new CustomEvent("station:send", { detail: { type: type, fields: fields } }));
}

function betsOpen() {
  if (!state?.round || !state.bets || state.bets.length === 0) return false;
  return state.round.phase !== "settled" && state.round.phase !== "void";
}

function money(currency) {
  const formatter = moneyFormat(currency, false);
  return (value) => (formatter ? formatter.format(Number(value)) : String(value));
}

function limitsText(line) {
  const amount = money(line.currency);
  const parts = [];
  const main = line.limits.main;
  if (main) {
    parts.push(
      format(gettext("Main bet %(low)s to %(high)s"), { low: amount(main[0]), high: amount(main[1]) }),
    );
  }
  const special = line.limits.special;
  if (special) {
    parts.push(
      format(gettext("special bets %(low)s to %(high)s"), {
        low: amount(special[0]),
        high: amount(special[1]),
      }),
    );
  }
  return parts.join(", ");
}

function rulesText(line) {
  if (!line.rules) return gettext("Not configured yet");
  const parts = [
    format(ngettext("%(decks)s deck", "%(decks)s decks", line.rules.decks), {
      decks: line.rules.decks,
    }),
    format(gettext("blackjack pays %(pays)s"), { pays: line.rules.blackjack_pays }),
    line.rules.dealer_hits_soft_17 ? gettext("dealer hits soft 17") : gettext("dealer stands on soft 17"),
  ];
  if (line.special_bets.length) {
    parts.push(
      format(ngettext("%(count)s special bet", "%(count)s special bets", line.special_bets.length), {
        count: line.special_bets.length,
      }),
    );
  }
  return parts.join(", ");
}

function tableNode(line, blocked) {
  const heading = el("h3", { id: `lobby-table-${line.table_id}`, text: line.table });
  const mode = `${MODES[line.mode] || line.mode}, ${PLAYS[line.play] || line.play}`;
  const who = [
    format(ngettext("%(count)s player", "%(count)s players", line.players), { count: line.players }),
  ];
  if (line.dealer) who.push(format(gettext("dealer %(name)s"), { name: line.dealer }));
  const item = el("li", { class: "lobby-table", "aria-labelledby": heading.id }, [
    heading,
    el("p", { text: `${mode} · ${line.open ? gettext("Open") : gettext("Closed")}` }),
    el("p", { text: rulesText(line) }),
    el("p", { text: limitsText(line) }),
    el("p", { text: who.join(" · ") }),
  ]);
  if (line.here) {
    item.appendChild(el("p", { class: "lobby-here", text: gettext("You are playing here.") }));
    return item;
  }
  const button = el("button", {
    type: "button",
    "data-table": String(line.table_id),
    "aria-describedby": `${heading.id} lobby-note`,
    text: gettext("Move here"),
  });
  button.disabled = blocked || !line.open || moving;
  button.addEventListener("click", () => {
    moving = true;
    render();
    send("move_table", { table: line.table_id });
  });
  item.appendChild(button);
  return item;
}

function render() {
  const list = $("lobby-tables");
  const blocked = betsOpen();
  let note = "";
  if (moving) note = gettext("Moving to the other table…");
  else if (blocked) note = gettext("You can move to another table once your bets are settled.");
  else if (tables === null) note = gettext("Open this panel to see the tables.");
  $("lobby-note").textContent = note;
  list.replaceChildren(...(tables || []).map((line) => tableNode(line, blocked)));
}

function ask() {
  send("tables");
}

function start() {
  root.addEventListener("station:state", (event) => {
    const first = state === null;
    state = event.detail;
    if (first && panel.open) ask();
    render();
  });
  root.addEventListener("station:reply", (event) => {
    const { command, frame } = event.detail;
    if (!command) return;
    if (command.type === "tables" && frame.ok) {
      tables = frame.tables;
      render();
    } else if (command.type === "move_table" && !frame.ok) {
      moving = false;
      ask(); // the refusal is said by station.js; the list may have changed
    }
  });
  panel.addEventListener("toggle", () => {
    if (panel.open && state) ask();
  });
  $("lobby-refresh").addEventListener("click", ask);
  render();
}

if (root && panel) start();
