/*
 * The reference player station (docs/protocol.md, "Station socket"): an ES module.
 *
 * It speaks the station websocket exactly as station hardware does: join with the device
 * credential, one client_id per command, one reply per command, events in between. The
 * server's state is the truth: this page never works out a rule of the game. It draws the
 * last full state, applies events to it for a quick update, and asks for the full state
 * again whenever an event means the server has worked something out (a phase, a step and
 * its deadline, a question, a settlement) or when event ids show it may have missed one.
 *
 * The device credential comes from the URL fragment (#credential=..., never sent to the
 * server with the page) or from the form, and is kept in sessionStorage only.
 */
import {
  changeText, disputeNotice, listNotice, receiptNotice, TABLE_NEWS, tableNotice,
} from "./notices.js";
import { clockText, format, gettext, moneyFormat } from "../tablehub/i18n.js";
import { renderRules } from "./rules.js";
import { playerError } from "./words.js";

// Without the station's element (another page) nothing starts: see start() at the end.
const root = document.getElementById("station");
const data = root ? root.dataset : {};
const TABLE = data.table;
const STATION = data.station;
const WS_PATH = data.wsPath;
const STORE_KEY = `tablehub.station.${TABLE}.${STATION}.credential`;
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000];

// Names shown for the protocol's codes (display only).
const PHASES = {
  betting: gettext("Place your bets"),
  deal: gettext("Dealing"),
  bonus: gettext("In For 6 bonus"),
  insurance: gettext("Insurance"),
  play: gettext("Players decide"),
  dealer: gettext("Dealer's turn"),
  settled: gettext("Round over"),
  void: gettext("Round void"),
};
const RESULTS = {
  win: gettext("Win"),
  lose: gettext("Lose"),
  push: gettext("Push"),
  bust: gettext("Bust"),
  blackjack: gettext("Blackjack"),
  surrender: gettext("Surrendered"),
  even_money: gettext("Even money"),
  charlie: gettext("Charlie"),
};
// The bets by the names seed 001 §5 gives them (a brand name stays as it is in Spanish).
const BET_NAMES = {
  main: gettext("Main bet"), "21+3": "21+3", "top_21+3": "Top 21+3", pair: gettext("Pair"),
  bust: gettext("Bust bet"), blackjack_bonus: gettext("Blackjack Bonus"),
  dealer_red: gettext("Dealer red"), dealer_black: gettext("Dealer black"),
  suits: gettext("Suits"), in_for_6: gettext("In For 6"), lucky_aces: gettext("Lucky Aces"),
  lucky_ladies: gettext("Lucky Ladies"), match: gettext("Match"), lucky_lucky: "Lucky Lucky",
  "19+": "19+", c3: "C3", poker_3: "Poker 3", poker_3_bonus: "Poker 3 Bonus", kk: "KK",
  qq: "QQ", jj: "JJ", "a-2": "A-2", "7s": "7's", qq_as_lucky_ladies: "QQ AS Lucky Ladies",
  sweet_16: "Sweet 16",
};const RANKS = { A: "A", K: "K", Q: "Q", J: "J", T: "10" };
const RANK_NAMES = {
  A: gettext("ace"), K: gettext("king"), Q: gettext("queen"), J: gettext("jack"),
  T: gettext("ten"), 9: gettext("nine"), 8: gettext("eight"), 7: gettext("seven"),
  6: gettext("six"), 5: gettext("five"), 4: gettext("four"), 3: gettext("three"),
  2: gettext("two"),
};
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const SUIT_NAMES = {
  S: gettext("spades"), H: gettext("hearts"), D: gettext("diamonds"), C: gettext("clubs"),
};
const REFRESH_ON = {
  phase: true, step: true, prompt: true, hands: true, specials: true, bonus: true,
  settlement: true, round_over: true, peek: true,
};

function $(id) {
  return document.getElementById(id);
}

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  Object.keys(attrs || {}).forEach((key) => {
    if (key === "text") node.textContent = attrs[key];
    else if (key === "className") node.className = attrs[key];
    else node.setAttribute(key, attrs[key]);
  });
  (children || []).forEach((child) => {
    if (child) node.appendChild(child);
  });
  return node;
}

// --- storage --------------------------------------------------------------------------

let memoryStore = null; // when sessionStorage is not available
function loadCredential() {
  try {
    return window.sessionStorage.getItem(STORE_KEY);
  } catch {
    return memoryStore;
  }
}
function saveCredential(value) {
  memoryStore = value;
  try {
    if (value === null) window.sessionStorage.removeItem(STORE_KEY);
    else window.sessionStorage.setItem(STORE_KEY, value);
  } catch {
    /* kept in memory only */
  }
}
function credentialFromFragment() {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ""));
  const value = params.get("credential");
  if (value) {
    saveCredential(value);
    params.delete("credential");
    const rest = params.toString();
    const url = window.location.pathname + window.location.search + (rest ? `#${rest}` : "");
    window.history.replaceState(null, "", url); // not left in the address bar
  }
}

// --- client ids: unique for this station across reloads (the server keeps every reply) -

const PREFIX = (() => {
  const bytes = new Uint8Array(8);
  window.crypto.getRandomValues(bytes);
  return Array.prototype.map
    .call(bytes, (b) => `0${b.toString(16)}`.slice(-2))
    .join("");
})();
let counter = 0;
function nextId() {
  counter += 1;
  return `${PREFIX}-${counter}`;
}

// --- state ----------------------------------------------------------------------------

let socket = null;
let joined = false;
let everJoined = false;
let stopped = false; // a refused credential: wait for the form
let attempts = 0;
let reconnectTimer = null;
let joinId = null;
const pending = new Map(); // client_id -> command waiting for its reply (resent on rejoin)
let stateRequest = null; // client_id of the state request in flight
let stateAgain = false;
let refreshTimer = null;
let alertTimer = null;

let state = null; // the last full state, with the events since applied
// Event trackers: seq = the last input the full state includes, last = [seq, n] of the
// last event applied on top of it.
let current = { seq: 0, last: null };
let previous = null; // the round before the state's: {round, table, seq, last}
let clockOffset = 0; // server time - this clock, in ms
let selectedChip = null;
let builtFor = null; // the info the chips and boxes were built for
const specialResults = {}; // "round:box:bet" -> returned, from specials and settlement events
let money = null;
let chipMoney = null;

function table() {
  return state?.table ? state.table : null;
}
function mine() {
  const t = table();
  return t?.station ? t.station : null;
}
function prompt() {
  const m = mine();
  return m ? m.prompt : null;
}
function phase() {
  return state?.round ? state.round.phase : null;
}

// --- messages -------------------------------------------------------------------------

function wsUrl() {
  const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  return scheme + window.location.host + WS_PATH;
}

function connect() {
  clearTimeout(reconnectTimer);
  const credential = loadCredential();
  if (!credential) {
    showCredentialForm("");
    return;
  }
  setConnection("connecting", gettext("Connecting…"));
  const ws = new WebSocket(wsUrl());
  socket = ws;
  ws.onopen = () => {
    if (ws !== socket) return;
    joinId = nextId();
    const join = { type: "join", client_id: joinId, station: STATION, credential: credential };
    ws.send(JSON.stringify(join));
  };
  ws.onmessage = (message) => {
    if (ws !== socket) return;
    let frame;
    try {
      frame = JSON.parse(message.data);
    } catch {
      showStatus(gettext("The table sent something unreadable."), true);
      return;
    }
    onFrame(frame);
  };
  ws.onclose = (event) => {
    if (ws !== socket) return;
    socket = null;
    if (event.code === 4410 && !stopped) {
      // The station moved to another table of its stadium from another screen: it plays
      // there now (docs/protocol.md, "Stadium lobby"), this page no longer joins.
      stopped = true;
      setConnection("offline", gettext("This station moved to another table."));
      return;
    }
    lostConnection();
  };
}

function lostConnection() {
  const wasJoined = joined;
  joined = false;
  stateRequest = null;
  stateAgain = false;
  pending.forEach((command, id) => {
    if (command.type === "state") pending.delete(id); // the join brings the state
  });
  render();
  if (stopped) return;
  if (wasJoined || everJoined) {
    const lost = gettext("Connection lost — reconnecting…");
    if ($("alert").dataset.kind !== "lost") listNotice($("notices"), { text: lost, kind: "lost" });
    showAlert(lost, "lost");
    setConnection("offline", gettext("Offline"));
  } else {
    setConnection("offline", gettext("Cannot reach the table — retrying…"));
  }
  const delay = BACKOFF_MS[Math.min(attempts, BACKOFF_MS.length - 1)];
  attempts += 1;
  reconnectTimer = setTimeout(connect, delay + Math.floor(Math.random() * 250));
}

function send(type, fields) {
  const command = Object.assign({ type: type, client_id: nextId() }, fields || {});
  pending.set(command.client_id, command);
  if (joined && socket && socket.readyState === WebSocket.OPEN) {
    socket.send(JSON.stringify(command));
  }
  return command.client_id;
}

function onFrame(frame) {
  if (frame.type === "event") {
    onEvent(frame);
    return;
  }
  if (frame.type !== "reply") return;
  if (frame.client_id === joinId && joinId !== null) {
    onJoin(frame);
    return;
  }
  if (frame.client_id === pingId && pingId !== null) {
    onPing(frame);
    return;
  }
  const command = pending.get(frame.client_id);
  pending.delete(frame.client_id);
  root.dispatchEvent(new CustomEvent("station:reply", { detail: { command, frame } })); // protection.js
  if (frame.client_id === stateRequest) {
    stateRequest = null;
  }
  if (frame.ok && frame.moved && !frame.resent) {
    followMove(frame.moved);
    return;
  }
  if (frame.ok) {
    if (frame.resent) requestState(); // a stored reply: its state may be old
    else applyState(frame.state);
    if (command && command.type !== "state") showStatus(doneText(command), false);
    if (frame.receipt) tellNotice(receiptNotice(frame.receipt, formatMoney, clockOffset));
    if (command && command.type === "cash_in") $("cash-in-amount").value = "";
    if (command && SEAT_COMMANDS[command.type]) requestState(); // the seating: a full state
    if (command && command.type === "shoe_seed" && state) {
      state.shoe_seed = frame.shoe_seed; // a reply's state leaves it out
      $("shoe-seed").value = "";
      renderShoe();
    }
  } else {
    showError(frame.error);
    const code = frame.error ? frame.error.code : "";
    // a refused answer leaves the question open; "in_progress": the first copy of a
    // command resent after a reconnect is still being handled, its reply lost
    if ((command && command.type === "decide") || code === "in_progress") requestState();
  }
  if (stateAgain && !stateRequest) {
    stateAgain = false;
    requestState();
  }
}

function onJoin(frame) {
  joinId = null;
  if (!frame.ok) {
    const error = frame.error || {};
    if (error.code === "unauthorized") {
      stopped = true;
      saveCredential(null);
      if (socket) socket.close();
      socket = null;
      setConnection("offline", gettext("Not connected"));
      showCredentialForm(gettext("The table did not accept this credential."));
    } else {
      showError(error);
      if (socket) socket.close(); // try again, with backoff
    }
    return;
  }
  joined = true;
  attempts = 0;
  setConnection("online", gettext("Connected"));
  const back = everJoined;
  everJoined = true;
  applyState(frame.state);
  if (back) {
    tellNotice({
      text: gettext("Reconnected: credits and the round restored from the table."),
      kind: "back",
      keepMs: 6000,
    });
  } else clearAlert();
  pending.forEach((command) => {
    // unanswered before the drop: sent again with the same client_id, never applied twice
    socket.send(JSON.stringify(command));
  });
  roundTrip = null; // a new connection: its own latency
  ping();
}

// --- the server's clock -----------------------------------------------------------------
// The countdown is the server's: the server's time from a ping, less half its round trip,
// as docs/protocol.md advises (an event's server_time arrives as late as the event, which
// at a busy table is a tenth of a second), kept from the ping with the shortest round trip
// of the connection. An answer counts when it reaches the server, so the countdown ends
// half a round trip before the deadline.
const PING_MS = 30000;
let pingId = null;
let pingSent = 0;
let roundTrip = null; // ms, the shortest of this connection's pings

function ping() {
  if (!joined || !socket || socket.readyState !== WebSocket.OPEN) return;
  pingId = nextId();
  pingSent = Date.now();
  socket.send(JSON.stringify({ type: "ping", client_id: pingId }));
}

function onPing(frame) {
  const trip = Date.now() - pingSent;
  pingId = null;
  if (!frame.ok || !frame.server_time) return;
  if (roundTrip === null || trip <= roundTrip) {
    roundTrip = trip;
    clockOffset = Date.parse(frame.server_time) - (pingSent + trip / 2);
    $("timer").dataset.roundTrip = String(trip);
  }
}

// The station moved to another table of its stadium (docs/protocol.md, "Stadium lobby"):
// the server closes this socket; the page goes to the station's page at the new table,
// which finds the credential in sessionStorage (or, without it, in the URL fragment).
function followMove(moved) {
  stopped = true;
  clearTimeout(reconnectTimer);
  showStatus(format(gettext("Moving to %(table)s…"), { table: moved.table }), false);
  const credential = loadCredential();
  let fragment = "";
  try {
    window.sessionStorage.setItem(`tablehub.station.${moved.table_id}.${STATION}.credential`, credential);
  } catch {
    fragment = `#credential=${encodeURIComponent(credential)}`;
  }
  window.location.assign(moved.page + fragment);
}

function requestState() {
  if (!joined) return;
  if (stateRequest) {
    stateAgain = true;
    return;
  }
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    if (joined && !stateRequest) stateRequest = send("state");
  }, 30); // one request for the events of one input
}

function seqOf(eventId) {
  const parts = String(eventId || "").split(".");
  return parts.length > 1 ? Number(parts[1]) : 0;
}

// Seat mode's commands: their replies' states leave the seating out; a full state has it.
const SEAT_COMMANDS = { take_seat: true, leave_seat: true, set_follow: true };

// A command's reply leaves out what changes only between rounds (join and state carry it).
const BETWEEN_ROUNDS = ["info", "last_round", "last_bet", "last_win", "win",
  "player_history", "dealer_history", "dealer_stats", "virtual_shoe", "shoe_seed", "seating"];

// Rounds count per table (Round 1, 2, ...); events name a round by its id, which counts
// across tables: each state tells the numbers of the rounds it names.
const roundNumbers = {};

function learnRoundNumbers(next) {
  const named = [next.round, next.dispute, ...(next.player_history || []),
    ...(next.dealer_history || [])];
  named.forEach((r) => {
    if (r?.number) roundNumbers[r.id ?? r.round] = r.number;
  });
}

function roundName(id) {
  return roundNumbers[id]
    ? format(gettext("Round %(number)s"), { number: roundNumbers[id] })
    : gettext("The round");
}

function applyState(next) {
  if (!next) return;
  learnRoundNumbers(next);
  if (state && !("info" in next)) {
    BETWEEN_ROUNDS.forEach((key) => {
      if (key in state) next[key] = state[key];
    });
  }
  if (state?.round && state.table && (!next.round || next.round.id !== state.round.id)) {
    // The round on screen gives way to the next one (at an open table, often before its
    // own settlement events have arrived): keep it, and its place in the event ids.
    previous = {
      round: { id: state.round.id, phase: state.round.phase, deadline: null },
      table: state.table,
      seq: current.seq,
      last: current.last,
    };
  } else if (previous && next.round && next.round.id === previous.round.id) {
    previous = null;
  }
  state = next;
  current = { seq: next.round ? seqOf(next.round.last_event_id) : 0, last: null };
  if (next.server_time && roundTrip === null) {
    clockOffset = Date.parse(next.server_time) - Date.now(); // until a ping tells better
  }
  render();
  toldCorrection();
  // Modules of their own (protection.js) draw from the state too.
  root.dispatchEvent(new CustomEvent("station:state", { detail: state }));
}

// --- events ---------------------------------------------------------------------------

// Where an event stands for a round's tracker: "old" (already in the state or applied),
// "next" (the following one) or "gap" (inputs in between sent this station nothing, or
// it missed events: the full state settles it either way).
function track(tracker, seq, n) {
  if (seq <= tracker.seq) return "old";
  const last = tracker.last;
  if (last && (seq < last[0] || (seq === last[0] && n <= last[1]))) return "old";
  tracker.last = [seq, n];
  return seq > (last ? last[0] : tracker.seq) + 1 ? "gap" : "next";
}

// Disputes: the round halts, goes on, or a supervisor corrected its cards (of the round on
// screen or of the last one): say so, with what a correction changed for this station once
// the fresh state shows it, and draw a fresh state.
const DISPUTE_NEWS = { halted: true, resumed: true, corrected: true };
let correction = null; // { event, before }: a correction waiting for its fresh state
const corrections = {}; // round -> what its correction changed, told again when it goes on

function onDisputeNews(event) {
  if (event.type === "corrected") {
    correction = { event: event, before: seen(event.round), resumed: null };
  } else if (event.type === "resumed" && correction?.event.round === event.round) {
    correction.resumed = event; // told after the correction, with what it changed
  } else {
    const change = event.type === "resumed" ? corrections[event.round] : undefined;
    tellNotice(disputeNotice(event, roundName, clockOffset, change));
  }
  requestState();
}

// The station's hands of a round and its credits, as this page shows them now.
function seen(round) {
  let view = null;
  if (state?.round && state.round.id === round) view = state;
  else if (previous && previous.round.id === round) view = previous;
  const hands = {};
  const mineSeen = view?.table?.station ? view.table.station.hands : [];
  mineSeen.forEach((hand) => {
    const many = mineSeen.filter((h) => h.box === hand.box).length > 1;
    const name = many
      ? format(gettext("Box %(box)s, hand %(hand)s"), { box: hand.box, hand: hand.id.split("/").pop() })
      : format(gettext("Box %(box)s"), { box: hand.box });
    let words = hand.cards.map(cardText).join(" ") + (hand.cards.length ? `, ${hand.total}` : "");
    if (hand.result) words += `, ${RESULTS[hand.result] || hand.result}`;
    hands[hand.id] = { name: name, words: words };
  });
  return { credits: state ? state.credits : null, hands: hands };
}

// A fresh state after a correction: say what it changed.
function toldCorrection() {
  if (!correction) return;
  const { event, before, resumed } = correction;
  correction = null;
  const change = changeText(before, seen(event.round), formatMoney);
  corrections[event.round] = change;
  tellNotice(disputeNotice(event, roundName, clockOffset, change));
  if (resumed) tellNotice(disputeNotice(resumed, roundName, clockOffset, change));
}

// What the table says that no card or question caused: say it, with the amounts.
function onTableNews(event, round) {
  if (event.type === "betting_restarted" && state?.round && round === state.round.id) {
    state.round.deadline = event.deadline; // count down to the new deadline, never to 0
    if (event.server_time && roundTrip === null) {
      clockOffset = Date.parse(event.server_time) - Date.now();
    }
  }
  tellNotice(tableNotice(event, formatMoney, roundName, clockOffset));
  if (event.type === "refunded" || event.type === "table_status") requestState();
  render();
}

// The virtual shoe's commitment, before its first card, and its reveal once it has ended
// (docs/integrity.md): shown with the table's facts, never as an alert (one per round).
function onShoeNews(event) {
  if (!state) return;
  const { type, ...shuffle } = event;
  if (type === "shoe_committed") {
    state.virtual_shoe = shuffle;
    if (state.shoe_seed && shuffle.station_seeds.includes(state.shoe_seed)) state.shoe_seed = null;
  } else {
    if (state.virtual_shoe?.shuffle === shuffle.shuffle) state.virtual_shoe = null;
    listNotice($("notices"), {
      text: format(gettext("Virtual shoe %(shuffle)s revealed: seed %(seed)s."), {
        shuffle: shuffle.shuffle,
        seed: shuffle.server_seed,
      }),
      kind: "news",
    });
  }
  renderShoe();
}

function renderShoe() {
  const shoe = state?.virtual_shoe;
  $("shoe-commitment").textContent = shoe
    ? format(gettext("shuffle %(shuffle)s: %(commitment)s"), {
      shuffle: shoe.shuffle,
      commitment: shoe.commitment,
    })
    : gettext("none (no virtual shoe dealing)");
  // Only a video table's virtual shoe takes a station's seed (docs/integrity.md).
  $("seed-form").hidden = state?.info?.mode !== "video";
  $("seed-given").textContent = state?.shoe_seed
    ? format(gettext("Your seed for the next shoe: %(seed)s"), { seed: state.shoe_seed })
    : "";
}

function onShoeSeed(event) {
  event.preventDefault();
  const seed = $("shoe-seed").value.trim();
  if (!/^[!-~]{1,64}$/.test(seed)) {
    showStatus(gettext("A seed is 1 to 64 letters, digits or signs, with no space."), true);
    $("shoe-seed").focus();
    return;
  }
  send("shoe_seed", { seed: seed });
}

function tellNotice(notice) {
  if (!notice) return;
  showAlert(notice.text, notice.kind, notice.keepMs);
  listNotice($("notices"), notice);
}

function onEvent(frame) {
  const parts = String(frame.id).split(".").map(Number);
  const round = parts[0];
  const event = frame.event || {};
  root.dispatchEvent(new CustomEvent("station:event", { detail: event })); // protection.js
  if (event.type === "state" && event.state) {
    applyState(event.state); // this station's new state, after a correction
    return;
  }
  if (DISPUTE_NEWS[event.type]) {
    onDisputeNews(event);
    return;
  }
  if (TABLE_NEWS[event.type]) {
    onTableNews(event, round);
    return;
  }
  if (event.type === "shoe_committed" || event.type === "shoe_revealed") {
    onShoeNews(event);
    return;
  }
  if (event.type === "seats") {
    onSeats(event);
    return;
  }
  if (state?.round && round === state.round.id) {
    const where = track(current, parts[1], parts[2]);
    if (where === "old") return;
    applyEvent(event, round, state);
    const closed = event.type === "dealer" && phase() === "betting";
    // a bet behind that followed a double or a split staked more: its credits changed
    const followed = Boolean(event.seat_action);
    if (where === "gap" || REFRESH_ON[event.type] || closed || followed) requestState();
  } else if (previous && round === previous.round.id) {
    if (track(previous, parts[1], parts[2]) === "old") return;
    applyEvent(event, round, previous);
    // its settlement changes the last result and histories, which only a state carries
    if (event.type === "settlement") requestState();
  } else {
    if (!state || !state.round || round > state.round.id) requestState(); // a new round
    return;
  }
  render();
}

// --- seat mode -----------------------------------------------------------------------

// Seat mode (docs/protocol.md): who sits where now, this station's seat and its follow
// choice (null at a common-draw table).
function seating() {
  return state?.seating ? state.seating : null;
}

// Who sits at seat ``box``: now (``live``: for taking a seat and betting), or for the round
// on screen (its hands and questions: the seats its bets closed with).
function seatOwner(box, live) {
  const t = table();
  const seats = !live && t?.seats ? t.seats : seating() ? seating().seats : {};
  return seats[String(box)] || null;
}

// Whether a bet (``live``) or a hand of this station on ``box`` is behind another's seat.
function isBehind(box, live) {
  const owner = seatOwner(box, live);
  return Boolean(seating() && owner && owner !== STATION);
}

// A seat was taken or left: every station hears who sits where (no state needed).
function onSeats(event) {
  const s = seating();
  if (!s) {
    requestState(); // a table that became a seat-mode table: its set-up comes with the state
    return;
  }
  s.seats = event.seats || {};
  const own = Object.keys(s.seats).find((box) => s.seats[box] === STATION);
  s.seat = own ? Number(own) : null;
  render();
}

// What a seat's decision did to this station's bet behind it (a hand event's seat_action),
// by round and hand: shown with the hand while its round is on screen.
const seatActions = {};
const SEAT_ACTIONS = {
  hit: gettext("Seat %(seat)s hit."),
  stand: gettext("Seat %(seat)s stood."),
  surrender: gettext("Seat %(seat)s surrendered: so does your bet behind."),
  double: gettext("Seat %(seat)s doubled: your bet behind stays as it was."),
  double_half: gettext("Seat %(seat)s doubled: your bet behind stays as it was."),
  split: gettext("Seat %(seat)s split: your bet behind stays on the first hand."),
};

function onSeatAction(round, before, hand, action) {
  const seat = { seat: hand.box };
  let words = SEAT_ACTIONS[action]
    ? format(SEAT_ACTIONS[action], seat)
    : format(gettext("Seat %(seat)s: %(action)s."), { seat: hand.box, action: action });
  const doubled = action === "double" || action === "double_half";
  if (doubled && before && Number(hand.stake) > Number(before.stake)) {
    words = format(gettext("Seat %(seat)s doubled: your bet behind doubled too."), seat);
  }
  if (action === "split" && !before) {
    // a hand made by the split: this station followed it
    words = format(gettext("Seat %(seat)s split: your bet behind split too."), seat);
    Object.keys(seatActions).forEach((key) => {
      const known = seatActions[key];
      if (key.startsWith(`${round}:`) && known.box === hand.box && known.action === "split") {
        known.words = words;
      }
    });
  }
  seatActions[`${round}:${hand.id}`] = { box: hand.box, action: action, words: words };
  return words;
}

function ensureTable(view) {
  if (!view.table) {
    view.table = {
      phase: view.round.phase,
      dealer: { cards: [] },
      boxes: {},
      burned: [],
      awaiting: "",
    };
  }
  return view.table;
}

function ensureMine(view) {
  const t = ensureTable(view);
  if (!t.station) t.station = { id: STATION, credits: null, hands: [], prompt: null };
  return t.station;
}

// Apply one event to a round's view: the state's round, or the previous round.
function applyEvent(event, round, view) {
  const t = ensureTable(view);
  const live = view === state;
  let m;
  switch (event.type) {
    case "card":
      if (event.to === "box") {
        const key = String(event.box);
        t.boxes[key] = (t.boxes[key] || []).concat([event.card]);
      } else if (event.to === "dealer_up") {
        t.dealer.cards = [event.card];
      } else if (event.to === "dealer") {
        t.dealer.cards = t.dealer.cards.concat([event.card]);
      } // "hands": the station's own cards come with its "hand" events
      break;
    case "burn":
      t.burned = (t.burned || []).concat([event.card]);
      break;
    case "hole_card_dealt":
      t.dealer.hole_card = "face_down";
      break;
    case "hole_card":
      delete t.dealer.hole_card;
      t.dealer.cards = t.dealer.cards.concat([event.card]);
      break;
    case "phase":
      t.phase = event.phase;
      view.round.phase = event.phase;
      if (live) showStatus("", false); // a message of the last phase is old news
      break;
    case "step":
      t.step = event.step;
      t.stations_asked = event.stations_asked;
      if ("turn" in event) t.turn = event.turn; // seat mode: whose turn it is
      break;
    case "seat_left":
      t.left = (t.left || []).concat([event.station]);
      if (live) {
        showStatus(format(gettext("%(station)s left seat %(seat)s: the table plays the seat."), {
          station: event.station, seat: event.box,
        }), false);
      }
      break;
    case "dealer":
      t.awaiting = event.prompt;
      break;
    case "peek":
      if (live) {
        showStatus(
          event.dealer_blackjack
            ? gettext("The dealer has blackjack.")
            : gettext("The dealer has no blackjack."),
          false
        );
      }
      break;
    case "hands":
      ensureMine(view).hands = event.hands;
      break;
    case "hand": {
      m = ensureMine(view);
      const index = m.hands.findIndex((h) => h.id === event.hand.id);
      if (event.seat_action) {
        const words = onSeatAction(round, index >= 0 ? m.hands[index] : null, event.hand,
          event.seat_action);
        if (live) showStatus(words, false);
      }
      if (index >= 0) m.hands[index] = event.hand;
      else m.hands = m.hands.concat([event.hand]);
      break;
    }
    case "prompt":
      ensureMine(view).prompt = event.prompt;
      break;
    case "specials":
      (event.bets || []).forEach((bet) => {
        specialResults[`${round}:${bet.box}:${bet.bet}`] = bet.returned;
      });
      break;
    case "bonus": {
      specialResults[`${round}:${event.box}:${event.bet}`] = event.returned;
      const multipliers = (event.multipliers || []).join(", ");
      showStatus(
        format(gettext("In For 6, box %(box)s: pick %(pick)s (%(multipliers)s) returned %(amount)s."), {
          box: event.box, pick: event.pick, multipliers: multipliers,
          amount: formatMoney(event.returned),
        }),
        false
      );
      break;
    }
    case "settlement":
      m = ensureMine(view);
      if (live) state.credits = event.credits; // a newer state has newer credits
      m.credits = event.credits;
      m.prompt = null;
      (event.hands || []).forEach((hand, i) => {
        if (m.hands[i]) Object.assign(m.hands[i], hand, { finished: true });
      });
      (event.special || []).forEach((bet) => {
        specialResults[`${round}:${bet.box}:${bet.bet}`] = bet.returned;
      });
      break;
    case "round_over":
      t.dealer = {
        cards: event.dealer.cards,
        total: event.dealer.total,
        blackjack: event.dealer.blackjack,
        bust: event.dealer.bust,
      };
      t.phase = "settled";
      view.round.phase = "settled";
      view.round.deadline = null;
      break;
    default:
      break;
  }
}

// --- commands from the screen ---------------------------------------------------------

function doneText(command) {
  switch (command.type) {
    case "place": {
      const fields = {
        amount: formatMoney(command.amount), box: command.box, seat: command.box,
        bet: betName(command.bet).toLowerCase(),
      };
      if (!seating()) return format(gettext("%(amount)s on box %(box)s, %(bet)s."), fields);
      return isBehind(command.box, true)
        ? format(gettext("%(amount)s behind seat %(seat)s, %(bet)s."), fields)
        : format(gettext("%(amount)s on seat %(seat)s, %(bet)s."), fields);
    }
    case "take_seat":
      return format(gettext("You sit at seat %(seat)s."), { seat: command.box });
    case "leave_seat":
      return gettext("You left your seat.");
    case "set_follow":
      return command.follow
        ? gettext("Your bets behind a seat follow its doubles and splits.")
        : gettext("Your bets behind a seat stay as they are when it doubles or splits.");
    case "cash_in":
      return format(gettext("Cashed in %(amount)s."), { amount: formatMoney(command.amount) });
    case "cash_out":
      return gettext("Cashed out.");
    case "tip":
      return format(gettext("You tipped the dealer %(amount)s. Thank you!"), {
        amount: formatMoney(command.amount),
      });
    case "decide":
      return "";
    case "dispute":
      return gettext("Dispute sent: the round is halted until a supervisor resolves it.");
    case "set_limits":
      return gettext("Limits set for this session.");
    case "shoe_seed":
      return gettext("Your seed goes into the next shoe's shuffle.");
    case "move_table":
      return gettext("Moving to the other table…");
    default:
      return "";
  }
}

function onDecision(action) {
  const p = prompt();
  if (!p) return;
  const fields = { action: action };
  if (p.hand) fields.hand = p.hand;
  mine().prompt = null; // answered: the reply brings the next question, if any
  render();
  send("decide", fields);
}

function onBetCommand(type) {
  send(type);
}

function onSpot(box, code) {
  if (!selectedChip) return;
  send("place", { box: box, bet: code, amount: selectedChip });
}

function onAmount(event, inputId, type) {
  event.preventDefault();
  const input = $(inputId);
  const amount = input.value.trim().replace(",", ".");
  if (!/^[0-9]+(\.[0-9]{1,2})?$/.test(amount)) {
    showStatus(gettext("Enter an amount such as 50 or 12.50."), true);
    input.focus();
    return;
  }
  send(type, { amount: amount });
}

function onCashIn(event) {
  onAmount(event, "cash-in-amount", "cash_in");
}

// A tip to the dealer, where the table's jurisdiction allows it (info.tips).
function onTip(event) {
  onAmount(event, "tip-amount", "tip");
}

// --- drawing --------------------------------------------------------------------------

function formatMoney(value) {
  if (value === null || value === undefined || value === "") return "–";
  return money ? money.format(Number(value)) : String(value);
}

function formatChip(value) {
  const number = Number(value);
  const formatter = Number.isInteger(number) && chipMoney ? chipMoney : money;
  return formatter ? formatter.format(number) : String(value);
}

function betName(code) {
  return BET_NAMES[code] || code.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
}

function cardNode(code) {
  if (code === "face_down") {
    return el("span", {
      className: "card back", role: "img", "aria-label": gettext("card face down"),
    });
  }
  const rank = code.charAt(0);
  const suit = code.charAt(1);
  return el("span", {
    className: `card${suit === "H" || suit === "D" ? " red" : ""}`,
    role: "img",
    "aria-label": format(gettext("%(rank)s of %(suit)s"), {
      rank: RANK_NAMES[rank], suit: SUIT_NAMES[suit],
    }),
    text: cardText(code),
  });
}

function cardText(code) {
  return (RANKS[code.charAt(0)] || code.charAt(0)) + SUITS[code.charAt(1)];
}

function cardsNode(cards, extraClass) {
  const box = el("div", { className: `cards${extraClass ? ` ${extraClass}` : ""}` });
  (cards || []).forEach((card) => {
    box.appendChild(cardNode(card));
  });
  return box;
}

let spots = {}; // "box:code" -> {button, stake, result}
let boxNodes = {}; // box -> {panel, cards, actions}
let chipButtons = [];

function build(info) {
  const key = JSON.stringify([info.currency, info.boxes, info.chips, info.special_bets]);
  if (key === builtFor) return;
  builtFor = key;
  // amounts as the page's language writes them, in the table's currency
  money = moneyFormat(info.currency, false);
  chipMoney = moneyFormat(info.currency, true);

  const chips = $("chips");
  chips.textContent = "";
  chipButtons = info.chips.map((chip, i) => {
    const button = el("button", {
      type: "button",
      className: `chip chip-${i % 6}`,
      "aria-pressed": "false",
      "data-chip": chip,
      text: formatChip(chip),
    });
    // the selected chip's tick: seen, not read out (aria-pressed says it)
    button.appendChild(el("span", { className: "chip-mark", "aria-hidden": "true", text: "✓" }));
    button.addEventListener("click", () => {
      selectedChip = chip;
      render();
    });
    chips.appendChild(button);
    return button;
  });
  if (info.chips.indexOf(selectedChip) < 0) selectedChip = info.chips[0] || null;

  const boxes = $("boxes");
  boxes.textContent = "";
  spots = {};
  boxNodes = {};
  for (let box = 1; box <= info.boxes; box++) {
    boxes.appendChild(buildBox(box, info));
  }
}

function buildBox(box, info) {
  const heading = el("h3", {
    id: `box-${box}-heading`, text: format(gettext("Box %(box)s"), { box: box }),
  });
  const cards = el("div", { className: "box-cards" });
  const spotsNode = el("div", { className: "spots" });
  ["main"].concat(info.special_bets).forEach((code) => {
    const stake = el("span", { className: "spot-stake" });
    const result = el("span", { className: "spot-result" });
    const button = el(
      "button",
      { type: "button", className: `spot${code === "main" ? " main" : " special"}` },
      [el("span", { className: "spot-name", text: betName(code) }), stake, result]
    );
    button.addEventListener("click", () => {
      onSpot(box, code);
    });
    spotsNode.appendChild(button);
    spots[`${box}:${code}`] = {
      button: button, stake: stake, result: result, box: box, code: code,
    };
  });
  // seed 001 §3.1.1: "BET ALL", with what one press wagers underneath (renderSpots)
  const betAllAmount = el("small", { className: "bet-all-amount" });
  const betAll = el("button", { type: "button", className: "box-action" }, [
    document.createTextNode(gettext("Bet all")),
    betAllAmount,
  ]);
  betAll.setAttribute("aria-label", format(gettext("Bet all on box %(box)s"), { box: box }));
  betAll.title = gettext("Puts a chip of the chosen value on the main bet and on every special bet of this box; press again to add as much again.");
  betAll.addEventListener("click", () => {
    if (selectedChip) send("bet_all", { box: box, amount: selectedChip });
  });
  const letItPlay = el("button", {
    type: "button", className: "box-action", text: gettext("Let it play"),
  });
  letItPlay.title = gettext("Bets what this box won last round on its main bet.");
  letItPlay.setAttribute("aria-label", format(gettext("Let it play on box %(box)s"), { box: box }));
  letItPlay.addEventListener("click", () => {
    send("let_it_play", { box: box });
  });
  const actions = el("div", { className: "box-actions" }, [betAll, letItPlay]);
  // seat mode: who sits here, and the button to sit here when the seat is free
  const seat = el("p", { className: "box-seat" });
  const take = el("button", {
    type: "button", className: "take-seat",
    text: format(gettext("Take seat %(seat)s"), { seat: box }),
  });
  take.hidden = true;
  take.addEventListener("click", () => {
    send("take_seat", { box: box });
  });
  const panel = el(
    "section",
    { className: "box", "aria-labelledby": `box-${box}-heading`, "data-box": String(box) },
    [heading, seat, take, cards, spotsNode, actions]
  );
  boxNodes[box] = {
    panel: panel, cards: cards, actions: [betAll, letItPlay], betAllAmount: betAllAmount,
    heading: heading, seat: seat, take: take, betAll: betAll, letItPlay: letItPlay,
  };
  return panel;
}

let rulesShown = null;

function render() {
  if (!state) {
    renderControls();
    return;
  }
  if (state.info) {
    build(state.info);
    $("table-name").textContent = state.info.table;
    $("tip-form").hidden = !state.info.tips;
    if (state.info !== rulesShown) {
      rulesShown = state.info; // the round's configuration: it may change between rounds
      renderRules($("rules"), state.info, formatMoney, betName);
    }
  }
  renderMeters();
  renderPhase();
  renderSeating();
  renderTable();
  renderSpots();
  renderControls();
  renderWin();
  renderHistory();
  renderShoe();
  tick();
}

// Seat mode: each box is a seat, with who sits there (yours, another player's: bets there
// are bets behind it, or empty), the seat whose turn it is, and the station's own seat, its
// follow choice and the cap behind a seat. At a common-draw table: boxes, as ever.
function renderSeating() {
  const s = seating();
  $("seating").hidden = !s;
  const t = table();
  const turn = s && t?.turn ? t.turn : null;
  Object.keys(boxNodes).forEach((key) => {
    const box = Number(key);
    const node = boxNodes[box];
    const owner = s ? seatOwner(box, true) : null;
    const mineSeat = Boolean(s && owner === STATION);
    node.heading.textContent = s
      ? format(gettext("Seat %(seat)s"), { seat: box })
      : format(gettext("Box %(box)s"), { box: box });
    let who = "";
    if (s && mineSeat) who = gettext("Your seat");
    else if (s && owner) who = format(gettext("%(station)s sits here: you may bet behind"), { station: owner });
    else if (s) who = gettext("Empty seat");
    if (node.seat.textContent !== who) node.seat.textContent = who;
    node.panel.classList.toggle("mine", mineSeat);
    node.panel.classList.toggle("turn", Boolean(turn && turn.box === box));
    node.take.hidden = !(s && !owner && s.seat === null && betweenRounds());
    node.betAll.setAttribute("aria-label", s
      ? isBehind(box, true)
        ? format(gettext("Bet all behind seat %(seat)s"), { seat: box })
        : format(gettext("Bet all on seat %(seat)s"), { seat: box })
      : format(gettext("Bet all on box %(box)s"), { box: box }));
    node.letItPlay.setAttribute("aria-label", s
      ? format(gettext("Let it play on seat %(seat)s"), { seat: box })
      : format(gettext("Let it play on box %(box)s"), { box: box }));
  });
  if (!s) return;
  $("seat-mine").textContent = s.seat
    ? format(gettext("You sit at seat %(seat)s: you decide for it."), { seat: s.seat })
    : gettext("You have no seat: take a free seat, or bet behind a seated player.");
  $("leave-seat").hidden = !s.seat;
  $("follow-behind").checked = Boolean(s.follow);
  $("behind-cap").textContent = s.behind_cap
    ? format(gettext("All bets behind one seat together: at most %(amount)s."), {
      amount: formatMoney(s.behind_cap),
    })
    : "";
}

// Between rounds (no round, bets open, or the last round over): when a seat may be taken.
function betweenRounds() {
  const p = phase();
  return !p || p === "betting" || p === "settled" || p === "void";
}

// Seed 001 §4 "Bet": what the station has on the table now, its main bets with their
// doubles and splits (its hands' stakes, once dealt) and its special bets.
function betOnTable() {
  const bets = state.bets || [];
  if (!bets.length || phase() === "settled" || phase() === "void") return null;
  const hands = state.table?.station ? state.table.station.hands : [];
  const dealt = new Set(hands.map((h) => h.box));
  let cents = 0;
  bets.forEach((bet) => {
    if (!(bet.bet === "main" && dealt.has(bet.box))) cents += Math.round(Number(bet.stake) * 100);
  });
  hands.forEach((hand) => {
    cents += Math.round(Number(hand.stake) * 100);
  });
  return (cents / 100).toFixed(2);
}

function renderMeters() {
  $("credits").textContent = formatMoney(state.credits);
  $("bet").textContent = formatMoney(betOnTable());
  $("last-bet").textContent = formatMoney(state.last_bet);
  $("last-win").textContent = formatMoney(state.last_win);
}

// What the table is doing, in a player's words (the dealer's own instructions are for the
// croupier tablet, not for players).
function tableNews(t) {
  if (t.station?.prompt) return gettext("Your turn");
  if (seating() && t.turn) {
    return t.turn.station === STATION
      ? format(gettext("Your seat %(seat)s: your turn"), { seat: t.turn.box })
      : format(gettext("Seat %(seat)s (%(station)s) is deciding"), {
        seat: t.turn.box, station: t.turn.station,
      });
  }
  if (t.stations_asked > 0) return gettext("Waiting for the other players");
  if (state.round?.phase === "dealer") return gettext("The dealer plays the dealer's hand");
  return gettext("The dealer is dealing");
}

function renderPhase() {
  const p = phase();
  $("phase").textContent = p ? PHASES[p] || p : "Waiting for the next round";
  $("round-number").textContent = state.round ? `Round ${state.round.number}` : "";
  const t = table();
  $("awaiting").textContent = t && p !== "settled" ? tableNews(t) : "";
}

// The round to draw: the state's, or until it is dealt the one before it (when that is
// the table's newest settled round, or is still settling).
function shownView() {
  if (state?.table) return { view: state, last: false };
  const newest = state?.dealer_history ? state.dealer_history[0] : null;
  if (previous?.table && (!newest || newest.round <= previous.round.id)) {
    return { view: previous, last: true };
  }
  return null;
}

function renderTable() {
  const shown = shownView();
  const t = shown ? shown.view.table : null;
  $("round-caption").textContent = shown?.last ? "Last round" : "";
  const dealer = $("dealer-cards");
  dealer.textContent = "";
  const dealerCards = t ? (t.dealer.cards || []).slice() : [];
  if (t && t.dealer.hole_card === "face_down") dealerCards.push("face_down");
  dealerCards.forEach((card) => {
    dealer.appendChild(cardNode(card));
  });
  let total = "";
  if (t && t.dealer.total !== undefined) {
    if (t.dealer.blackjack) total = gettext("Blackjack");
    else if (t.dealer.bust || t.dealer.total > 21) {
      total = format(gettext("%(total)s, bust"), { total: t.dealer.total });
    }
    else total = String(t.dealer.total);
  }
  $("dealer-total").textContent = total;

  const mineShown = t?.station ? t.station : null;
  const p = shown && !shown.last ? prompt() : null;
  Object.keys(boxNodes).forEach((key) => {
    const box = Number(key);
    const node = boxNodes[box].cards;
    node.textContent = "";
    const hands = mineShown ? mineShown.hands.filter((h) => h.box === box) : [];
    if (hands.length) {
      hands.forEach((hand, i) => {
        node.appendChild(handNode(hand, i, hands.length, p));
      });
    } else if (t?.boxes?.[key]?.length) {
      node.appendChild(cardsNode(t.boxes[key], "public"));
    }
    boxNodes[box].panel.classList.toggle("asked", Boolean(p && p.box === box));
  });
}

function handNode(hand, i, count, p) {
  const asked = Boolean(p && p.hand === hand.id);
  const total = hand.cards.length ? (hand.soft ? "soft " : "") + hand.total : "";
  const parts = [
    cardsNode(hand.cards),
    el("p", { className: "hand-line" }, [
      el("span", { className: "hand-total", text: total }),
      el("span", {
        className: "hand-stake",
        text: format(gettext("Stake %(amount)s"), { amount: formatMoney(hand.stake) }),
      }),
    ]),
  ];
  if (hand.result) {
    parts.push(
      el("p", {
        className: `hand-result result-${hand.result}`,
        text: format(gettext("%(result)s · returned %(amount)s"), {
          result: RESULTS[hand.result] || hand.result, amount: formatMoney(hand.returned),
        }),
      })
    );
  }
  let name = count > 1
    ? format(gettext("Your hand %(n)s of %(count)s"), { n: i + 1, count: count })
    : gettext("Your hand");
  if (isBehind(hand.box)) {
    name = count > 1
      ? format(gettext("Your bet behind seat %(seat)s, hand %(n)s of %(count)s"), {
        seat: hand.box, n: i + 1, count: count,
      })
      : format(gettext("Your bet behind seat %(seat)s"), { seat: hand.box });
    const shown = shownView();
    const followed = shown ? seatActions[`${shown.view.round.id}:${hand.id}`] : null;
    if (followed) parts.push(el("p", { className: "hand-followed", text: followed.words }));
  }
  const node = el(
    "div",
    { className: `hand${asked ? " asked" : ""}`, "aria-label": name, role: "group" },
    parts
  );
  if (asked) node.setAttribute("aria-current", "true");
  return node;
}

function renderSpots() {
  const stakes = {};
  (state.bets || []).forEach((bet) => {
    stakes[`${bet.box}:${bet.bet}`] = bet.stake;
  });
  // Special bets' results stay on their spots while their round is on screen: until the
  // next round's cards, even once its bets are open.
  const shown = shownView();
  const roundId = shown ? shown.view.round.id : state.round ? state.round.id : null;
  const perPress = state.info && selectedChip
    ? Number(selectedChip) * (1 + state.info.special_bets.length) : null;
  Object.keys(boxNodes).forEach((key) => {
    boxNodes[key].betAllAmount.textContent = perPress ? formatMoney(perPress.toFixed(2)) : "";
  });
  Object.keys(spots).forEach((key) => {
    const spot = spots[key];
    const stake = stakes[key];
    spot.stake.textContent = stake ? formatMoney(stake) : "";
    spot.button.classList.toggle("has-stake", Boolean(stake));
    const returned = specialResults[`${roundId}:${key}`];
    spot.result.textContent =
      spot.code !== "main" && returned !== undefined
        ? Number(returned) > 0
          ? format(gettext("Returned %(amount)s"), { amount: formatMoney(returned) })
          : gettext("Lost")
        : "";
    const words = { box: spot.box, seat: spot.box, bet: betName(spot.code).toLowerCase() };
    let label = format(gettext("Box %(box)s %(bet)s"), words);
    if (seating()) {
      label = isBehind(spot.box, true)
        ? format(gettext("Bet behind seat %(seat)s, %(bet)s"), words)
        : format(gettext("Seat %(seat)s %(bet)s"), words);
    }
    if (stake) label += format(gettext(", %(amount)s staked"), { amount: formatMoney(stake) });
    spot.button.setAttribute("aria-label", label);
  });
}

function renderControls() {
  const betting = joined && phase() === "betting";
  chipButtons.forEach((button) => {
    const on = button.dataset.chip === selectedChip;
    button.setAttribute("aria-pressed", on ? "true" : "false");
  });
  const s = seating();
  // seat mode: nobody bets on an empty seat
  const open = (box) => betting && (!s || Boolean(seatOwner(box, true)));
  Object.keys(spots).forEach((key) => {
    spots[key].button.disabled = !open(spots[key].box) || !selectedChip;
  });
  Object.keys(boxNodes).forEach((key) => {
    boxNodes[key].actions.forEach((button) => {
      button.disabled = !open(Number(key));
    });
    boxNodes[key].take.disabled = !joined;
  });
  $("leave-seat").disabled = !joined;
  $("follow-behind").disabled = !joined;
  root.querySelectorAll(".bet-controls [data-command]").forEach((button) => {
    button.disabled = !betting;
  });
  root.querySelectorAll(".money button").forEach((button) => {
    button.disabled = !joined;
  });

  const halted = Boolean(state?.round?.halted);
  const p = joined && !halted ? prompt() : null;
  const allowed = p ? p.allowed : [];
  root.querySelectorAll("[data-action]").forEach((button) => {
    button.disabled = allowed.indexOf(button.dataset.action) < 0;
  });
  $("picks").hidden = !(p && p.kind === "bonus_pick");
  $("prompt-text").textContent = halted ? "Halted: wait for the supervisor" : promptText(p);
  showQuestion(p);
  renderDispute(halted);
}

// The question at a seat-mode table: about a seat, or a bet behind one (insurance and even
// money are each station's own decision).
function seatPromptText(p) {
  const seat = { seat: p.box };
  const behind = isBehind(p.box);
  if (p.kind === "insurance") {
    return behind
      ? format(gettext("Behind seat %(seat)s: insurance?"), seat)
      : format(gettext("Seat %(seat)s: insurance?"), seat);
  }
  if (p.kind === "even_money") {
    return behind
      ? format(gettext("Behind seat %(seat)s: even money?"), seat)
      : format(gettext("Seat %(seat)s: even money?"), seat);
  }
  if (p.kind === "bonus_pick") {
    return format(gettext("Seat %(seat)s: pick a card for the In For 6 bonus"), seat);
  }
  return format(gettext("Seat %(seat)s: your decision"), seat);
}

// A question just opened: its buttons come to the screen (pinned at a phone's bottom edge)
// and the box it is about scrolls into view above them.
let questionShown = null;

function showQuestion(p) {
  $("decisions").dataset.open = p ? "true" : "false";
  const key = p ? `${p.kind}:${p.hand || ""}:${p.box}` : null;
  if (key === questionShown) return;
  questionShown = key;
  const box = p ? boxNodes[p.box] : null;
  if (!box) return;
  if (window.matchMedia("(max-width: 600px)").matches) {
    box.panel.scrollIntoView({ block: "start" }); // the buttons are pinned below it
  } else {
    box.panel.scrollIntoView({ block: "nearest" });
    $("decisions").scrollIntoView({ block: "nearest" });
  }
}

function renderDispute(halted) {
  const note = $("halted");
  const text = halted
    ? format(gettext("Round %(number)s is halted: a dispute waits for the supervisor."), {
      number: state.round.number,
    })
    : "";
  note.hidden = !halted;
  if (note.textContent !== text) note.textContent = text;
  const d = joined && state ? state.dispute : null;
  $("dispute-button").disabled = !d || d.halted;
  let about = gettext("Nothing to dispute now");
  if (d?.halted) about = format(gettext("Round %(number)s is under review."), { number: d.number });
  else if (d?.until) {
    about = format(gettext("Round %(number)s can be disputed until %(time)s."), {
      number: d.number, time: clockText(new Date(Date.parse(d.until) - clockOffset)),
    });
  } else if (d) about = format(gettext("Round %(number)s can be disputed."), { number: d.number });
  $("dispute-text").textContent = about;
}

function promptText(p) {
  if (!p) return gettext("No question open");
  const box = { box: p.box };
  if (seating()) return seatPromptText(p);
  if (p.kind === "insurance") return format(gettext("Box %(box)s: insurance?"), box);
  if (p.kind === "even_money") return format(gettext("Box %(box)s: even money?"), box);
  if (p.kind === "bonus_pick") {
    return format(gettext("Box %(box)s: pick a card for the In For 6 bonus"), box);
  }
  return format(gettext("Box %(box)s: your decision"), box);
}

function renderWin() {
  const node = $("win");
  const shown = shownView();
  // the win of the last settled round, while that round is on screen
  const show = Boolean(
    state.win &&
      shown &&
      shown.view.round.phase === "settled" &&
      shown.view.round.id === state.last_round
  );
  let text = "";
  if (show) {
    const amount = formatMoney(state.last_win);
    if (state.win === "big") text = format(gettext("Big win! %(amount)s"), { amount: amount });
    else if (state.win === "nice") text = format(gettext("Nice win! %(amount)s"), { amount: amount });
    else text = format(gettext("You win %(amount)s"), { amount: amount });
  }
  if (node.textContent !== text) node.textContent = text;
  node.className = `win${show ? ` win-${state.win}` : ""}`;
}

function renderHistory() {
  const list = $("dealer-history");
  list.textContent = "";
  (state.dealer_history || []).forEach((h) => {
    const text = h.blackjack ? gettext("BJ") : String(h.total);
    const label = h.blackjack
      ? gettext("blackjack")
      : h.bust ? format(gettext("%(total)s, bust"), { total: h.total }) : String(h.total);
    const named = format(gettext("Round %(number)s: %(outcome)s"), {
      number: h.number, outcome: label,
    });
    list.appendChild(
      el("li", {
        className: `outcome${h.bust ? " bust" : ""}${h.blackjack ? " bj" : ""}`,
        title: named,
        "aria-label": named,
        text: text,
      })
    );
  });
  const stats = $("dealer-stats");
  stats.textContent = "";
  const s = state.dealer_stats;
  let rows = [[gettext("Rounds"), s ? String(s.rounds) : "0"]];
  if (s?.rounds) {
    rows = rows.concat([
      [gettext("Bust"), `${s.bust_percent}% (${s.bust})`],
      [gettext("Blackjacks"), String(s.blackjack)],
    ]);
    ["17", "18", "19", "20", "21"].forEach((total) => {
      rows.push([total, String(s.totals[total])]);
    });
    rows.push([gettext("Under 17"), String(s.under_17)]);
  }
  rows.forEach((row) => {
    stats.appendChild(
      el("div", { className: "stat" }, [el("dt", { text: row[0] }), el("dd", { text: row[1] })])
    );
  });

  const body = $("player-history");
  body.textContent = "";
  (state.player_history || []).forEach((h) => {
    const net = Number(h.net);
    body.appendChild(
      el("tr", { className: net > 0 ? "up" : net < 0 ? "down" : "" }, [
        el("td", { text: String(h.number) }),
        el("td", { text: formatMoney(h.staked) }),
        el("td", { text: formatMoney(h.returned) }),
        el("td", { text: formatMoney(h.net) }),
      ])
    );
  });
}

// --- the step timer -------------------------------------------------------------------

function tick() {
  const timer = $("timer");
  const value = $("timer-value");
  const dispute = state ? state.dispute : null;
  if (dispute?.until && Date.parse(dispute.until) <= Date.now() + clockOffset) {
    $("dispute-button").disabled = true; // the window has closed: the result is final
  }
  const deadline = state?.round ? state.round.deadline : null;
  if (!deadline || !joined) {
    timer.dataset.active = "false";
    if (value.textContent !== "–") value.textContent = "–";
    return;
  }
  const early = roundTrip === null ? 0 : roundTrip / 2; // the answer's way to the server
  const left = Math.max(
    0,
    Math.ceil((Date.parse(deadline) - early - (Date.now() + clockOffset)) / 1000),
  );
  const text = format(gettext("%(seconds)s s"), { seconds: left });
  timer.dataset.active = "true";
  timer.dataset.urgent = left <= 5 ? "true" : "false";
  if (value.textContent !== text) value.textContent = text;
}

// --- messages on screen ---------------------------------------------------------------

function setConnection(kind, text) {
  const node = $("connection");
  node.dataset.state = kind;
  node.textContent = text;
}

function showAlert(text, kind, clearAfter) {
  clearTimeout(alertTimer);
  const node = $("alert");
  node.textContent = text;
  node.dataset.kind = kind;
  if (clearAfter) alertTimer = setTimeout(clearAlert, clearAfter);
}

function clearAlert() {
  clearTimeout(alertTimer);
  $("alert").textContent = "";
}

function showStatus(text, isError) {
  const node = $("status");
  node.textContent = text || "";
  node.classList.toggle("error", Boolean(isError));
}

function showError(error) {
  showStatus(playerError(error, formatMoney), true);
}

function showCredentialForm(message) {
  const form = $("credential-form");
  form.hidden = false;
  $("credential-error").textContent = message || "";
  $("credential-error").setAttribute("role", message ? "alert" : "note");
  $("credential-input").focus();
}

// --- start ----------------------------------------------------------------------------

function start() {
  $("credential-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const value = $("credential-input").value.trim();
    if (!value) return;
    saveCredential(value);
    $("credential-input").value = "";
    $("credential-form").hidden = true;
    stopped = false;
    attempts = 0;
    connect();
  });
  $("cash-in-form").addEventListener("submit", onCashIn);
  $("tip-form").addEventListener("submit", onTip);
  $("seed-form").addEventListener("submit", onShoeSeed);
  root.querySelector(".cash-out").addEventListener("click", () => {
    send("cash_out");
  });
  root.querySelectorAll(".bet-controls [data-command]").forEach((button) => {
    button.addEventListener("click", () => {
      onBetCommand(button.dataset.command);
    });
  });
  root.querySelectorAll("[data-action]").forEach((button) => {
    button.addEventListener("click", () => {
      onDecision(button.dataset.action);
    });
  });
  // A module of its own (protection.js) sends its commands through this page's socket.
  root.addEventListener("station:send", (event) => {
    send(event.detail.type, event.detail.fields);
  });
  $("leave-seat").addEventListener("click", () => {
    send("leave_seat");
  });
  $("follow-behind").addEventListener("change", (event) => {
    const s = seating();
    if (s) s.follow = event.target.checked; // as the table will have it once it replies
    send("set_follow", { follow: event.target.checked });
  });
  $("dispute-button").addEventListener("click", () => {
    if (state?.dispute) send("dispute", { round: state.dispute.round });
  });
  window.addEventListener("hashchange", () => {
    if (/credential=/.test(window.location.hash)) {
      credentialFromFragment();
      stopped = false;
      $("credential-form").hidden = true;
      if (socket) socket.close();
      else connect();
    }
  });

  setInterval(tick, 250);
  setInterval(ping, PING_MS);
  // No polling: a new round announces itself (a "phase": "betting" event of a newer round).

  credentialFromFragment();
  render();
  connect();
}

if (root) start();
