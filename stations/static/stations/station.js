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
// Without the station's element (another page) nothing starts: see start() at the end.
var root = document.getElementById("station");
var data = root ? root.dataset : {};
var TABLE = data.table;
var STATION = data.station;
var WS_PATH = data.wsPath;
var STORE_KEY = "tablehub.station." + TABLE + "." + STATION + ".credential";
var BACKOFF_MS = [500, 1000, 2000, 4000, 8000];

// Names shown for the protocol's codes (display only).
var PHASES = {
  betting: "Place your bets",
  deal: "Dealing",
  bonus: "In For 6 bonus",
  insurance: "Insurance",
  play: "Players decide",
  dealer: "Dealer's turn",
  settled: "Round over",
  void: "Round void",
};
var RESULTS = {
  win: "Win",
  lose: "Lose",
  push: "Push",
  bust: "Bust",
  blackjack: "Blackjack",
  surrender: "Surrendered",
  even_money: "Even money",
  charlie: "Charlie",
};
var BET_NAMES = { main: "Main bet", "21+3": "21+3", pair: "Pair", bust: "Bust bet" };
var RANKS = { A: "A", K: "K", Q: "Q", J: "J", T: "10" };
var RANK_NAMES = {
  A: "ace", K: "king", Q: "queen", J: "jack", T: "ten", 9: "nine", 8: "eight",
  7: "seven", 6: "six", 5: "five", 4: "four", 3: "three", 2: "two",
};
var SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
var SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
var REFRESH_ON = {
  phase: true, step: true, prompt: true, hands: true, specials: true, bonus: true,
  settlement: true, round_over: true, peek: true,
};

function $(id) {
  return document.getElementById(id);
}

function el(tag, attrs, children) {
  var node = document.createElement(tag);
  Object.keys(attrs || {}).forEach(function (key) {
    if (key === "text") node.textContent = attrs[key];
    else if (key === "className") node.className = attrs[key];
    else node.setAttribute(key, attrs[key]);
  });
  (children || []).forEach(function (child) {
    if (child) node.appendChild(child);
  });
  return node;
}

// --- storage --------------------------------------------------------------------------

var memoryStore = null; // when sessionStorage is not available
function loadCredential() {
  try {
    return window.sessionStorage.getItem(STORE_KEY);
  } catch (e) {
    return memoryStore;
  }
}
function saveCredential(value) {
  memoryStore = value;
  try {
    if (value === null) window.sessionStorage.removeItem(STORE_KEY);
    else window.sessionStorage.setItem(STORE_KEY, value);
  } catch (e) {
    /* kept in memory only */
  }
}
function credentialFromFragment() {
  var params = new URLSearchParams(window.location.hash.replace(/^#/, ""));
  var value = params.get("credential");
  if (value) {
    saveCredential(value);
    params.delete("credential");
    var rest = params.toString();
    var url = window.location.pathname + window.location.search + (rest ? "#" + rest : "");
    window.history.replaceState(null, "", url); // not left in the address bar
  }
}

// --- client ids: unique for this station across reloads (the server keeps every reply) -

var PREFIX = (function () {
  var bytes = new Uint8Array(8);
  window.crypto.getRandomValues(bytes);
  return Array.prototype.map
    .call(bytes, function (b) {
      return ("0" + b.toString(16)).slice(-2);
    })
    .join("");
})();
var counter = 0;
function nextId() {
  counter += 1;
  return PREFIX + "-" + counter;
}

// --- state ----------------------------------------------------------------------------

var socket = null;
var joined = false;
var everJoined = false;
var stopped = false; // a refused credential: wait for the form
var attempts = 0;
var reconnectTimer = null;
var joinId = null;
var pending = new Map(); // client_id -> command waiting for its reply (resent on rejoin)
var stateRequest = null; // client_id of the state request in flight
var stateAgain = false;
var refreshTimer = null;
var alertTimer = null;

var state = null; // the last full state, with the events since applied
// Event trackers: seq = the last input the full state includes, last = [seq, n] of the
// last event applied on top of it.
var current = { seq: 0, last: null };
var previous = null; // the round before the state's: {round, table, seq, last}
var clockOffset = 0; // server time - this clock, in ms
var selectedChip = null;
var builtFor = null; // the info the chips and boxes were built for
var specialResults = {}; // "round:box:bet" -> returned, from specials and settlement events
var money = null;
var chipMoney = null;

function table() {
  return state && state.table ? state.table : null;
}
function mine() {
  var t = table();
  return t && t.station ? t.station : null;
}
function prompt() {
  var m = mine();
  return m ? m.prompt : null;
}
function phase() {
  return state && state.round ? state.round.phase : null;
}

// --- messages -------------------------------------------------------------------------

function wsUrl() {
  var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  return scheme + window.location.host + WS_PATH;
}

function connect() {
  clearTimeout(reconnectTimer);
  var credential = loadCredential();
  if (!credential) {
    showCredentialForm("");
    return;
  }
  setConnection("connecting", "Connecting…");
  var ws = new WebSocket(wsUrl());
  socket = ws;
  ws.onopen = function () {
    if (ws !== socket) return;
    joinId = nextId();
    var join = { type: "join", client_id: joinId, station: STATION, credential: credential };
    ws.send(JSON.stringify(join));
  };
  ws.onmessage = function (message) {
    if (ws !== socket) return;
    var frame;
    try {
      frame = JSON.parse(message.data);
    } catch (e) {
      showStatus("The table sent something unreadable.", true);
      return;
    }
    onFrame(frame);
  };
  ws.onclose = function () {
    if (ws !== socket) return;
    socket = null;
    lostConnection();
  };
}

function lostConnection() {
  var wasJoined = joined;
  joined = false;
  stateRequest = null;
  stateAgain = false;
  pending.forEach(function (command, id) {
    if (command.type === "state") pending.delete(id); // the join brings the state
  });
  render();
  if (stopped) return;
  if (wasJoined || everJoined) {
    showAlert("Connection lost — reconnecting…", "lost");
    setConnection("offline", "Offline");
  } else {
    setConnection("offline", "Cannot reach the table — retrying…");
  }
  var delay = BACKOFF_MS[Math.min(attempts, BACKOFF_MS.length - 1)];
  attempts += 1;
  reconnectTimer = setTimeout(connect, delay + Math.floor(Math.random() * 250));
}

function send(type, fields) {
  var command = Object.assign({ type: type, client_id: nextId() }, fields || {});
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
  var command = pending.get(frame.client_id);
  pending.delete(frame.client_id);
  if (frame.client_id === stateRequest) {
    stateRequest = null;
  }
  if (frame.ok) {
    if (frame.resent) requestState(); // a stored reply: its state may be old
    else applyState(frame.state);
    if (command && command.type !== "state") showStatus(doneText(command), false);
    if (command && command.type === "cash_in") $("cash-in-amount").value = "";
  } else {
    showError(frame.error);
    var code = frame.error ? frame.error.code : "";
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
    var error = frame.error || {};
    if (error.code === "unauthorized") {
      stopped = true;
      saveCredential(null);
      if (socket) socket.close();
      socket = null;
      setConnection("offline", "Not connected");
      showCredentialForm("The table did not accept this credential.");
    } else {
      showError(error);
      if (socket) socket.close(); // try again, with backoff
    }
    return;
  }
  joined = true;
  attempts = 0;
  setConnection("online", "Connected");
  if (everJoined) showAlert("Reconnected", "back", 4000);
  else clearAlert();
  everJoined = true;
  applyState(frame.state);
  pending.forEach(function (command) {
    // unanswered before the drop: sent again with the same client_id, never applied twice
    socket.send(JSON.stringify(command));
  });
}

function requestState() {
  if (!joined) return;
  if (stateRequest) {
    stateAgain = true;
    return;
  }
  if (refreshTimer) return;
  refreshTimer = setTimeout(function () {
    refreshTimer = null;
    if (joined && !stateRequest) stateRequest = send("state");
  }, 30); // one request for the events of one input
}

function seqOf(eventId) {
  var parts = String(eventId || "").split(".");
  return parts.length > 1 ? Number(parts[1]) : 0;
}

// A command's reply leaves out what changes only between rounds (join and state carry it).
var BETWEEN_ROUNDS = ["info", "last_round", "last_bet", "last_win", "win",
  "player_history", "dealer_history", "dealer_stats"];

function applyState(next) {
  if (!next) return;
  if (state && !("info" in next)) {
    BETWEEN_ROUNDS.forEach(function (key) {
      if (key in state) next[key] = state[key];
    });
  }
  if (state && state.round && state.table && (!next.round || next.round.id !== state.round.id)) {
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
  if (next.server_time) clockOffset = Date.parse(next.server_time) - Date.now();
  render();
}

// --- events ---------------------------------------------------------------------------

// Where an event stands for a round's tracker: "old" (already in the state or applied),
// "next" (the following one) or "gap" (inputs in between sent this station nothing, or
// it missed events: the full state settles it either way).
function track(tracker, seq, n) {
  if (seq <= tracker.seq) return "old";
  var last = tracker.last;
  if (last && (seq < last[0] || (seq === last[0] && n <= last[1]))) return "old";
  tracker.last = [seq, n];
  return seq > (last ? last[0] : tracker.seq) + 1 ? "gap" : "next";
}

// Disputes: the round halts, goes on, or a supervisor corrected its cards (of the round on
// screen or of the last one): say so and draw a fresh state.
var DISPUTE_NEWS = { halted: true, resumed: true, corrected: true };

function onDisputeNews(event) {
  if (event.type === "halted") {
    showAlert("Round " + event.round + " is halted: a dispute waits for the supervisor.", "halted");
  } else if (event.type === "resumed") {
    showAlert("Round " + event.round + " goes on.", "back", 4000);
  } else {
    showAlert("The supervisor corrected cards of round " + event.round + ".", "back", 8000);
  }
  requestState();
}

function onEvent(frame) {
  var parts = String(frame.id).split(".").map(Number);
  var round = parts[0];
  var event = frame.event || {};
  if (event.type === "state" && event.state) {
    applyState(event.state); // this station's new state, after a correction
    return;
  }
  if (DISPUTE_NEWS[event.type]) {
    onDisputeNews(event);
    return;
  }
  if (state && state.round && round === state.round.id) {
    var where = track(current, parts[1], parts[2]);
    if (where === "old") return;
    applyEvent(event, round, state);
    var closed = event.type === "dealer" && phase() === "betting";
    if (where === "gap" || REFRESH_ON[event.type] || closed) requestState();
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
  var t = ensureTable(view);
  if (!t.station) t.station = { id: STATION, credits: null, hands: [], prompt: null };
  return t.station;
}

// Apply one event to a round's view: the state's round, or the previous round.
function applyEvent(event, round, view) {
  var t = ensureTable(view);
  var live = view === state;
  var m;
  switch (event.type) {
    case "card":
      if (event.to === "box") {
        var key = String(event.box);
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
      break;
    case "dealer":
      t.awaiting = event.prompt;
      break;
    case "peek":
      if (live) {
        showStatus(
          event.dealer_blackjack ? "The dealer has blackjack." : "The dealer has no blackjack.",
          false
        );
      }
      break;
    case "hands":
      ensureMine(view).hands = event.hands;
      break;
    case "hand":
      m = ensureMine(view);
      var index = m.hands.findIndex(function (h) {
        return h.id === event.hand.id;
      });
      if (index >= 0) m.hands[index] = event.hand;
      else m.hands = m.hands.concat([event.hand]);
      break;
    case "prompt":
      ensureMine(view).prompt = event.prompt;
      break;
    case "specials":
      (event.bets || []).forEach(function (bet) {
        specialResults[round + ":" + bet.box + ":" + bet.bet] = bet.returned;
      });
      break;
    case "bonus":
      specialResults[round + ":" + event.box + ":" + event.bet] = event.returned;
      var multipliers = (event.multipliers || []).join(", ");
      showStatus(
        "In For 6, box " + event.box + ": pick " + event.pick + " (" + multipliers +
          ") returned " + formatMoney(event.returned) + ".",
        false
      );
      break;
    case "settlement":
      m = ensureMine(view);
      if (live) state.credits = event.credits; // a newer state has newer credits
      m.credits = event.credits;
      m.prompt = null;
      (event.hands || []).forEach(function (hand, i) {
        if (m.hands[i]) Object.assign(m.hands[i], hand, { finished: true });
      });
      (event.special || []).forEach(function (bet) {
        specialResults[round + ":" + bet.box + ":" + bet.bet] = bet.returned;
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
    case "place":
      return (
        formatMoney(command.amount) + " on box " + command.box + ", " +
        betName(command.bet).toLowerCase() + "."
      );
    case "cash_in":
      return "Cashed in " + formatMoney(command.amount) + ".";
    case "cash_out":
      return "Cashed out.";
    case "decide":
      return "";
    case "dispute":
      return "Dispute sent: the round is halted until a supervisor resolves it.";
    default:
      return "";
  }
}

function onDecision(action) {
  var p = prompt();
  if (!p) return;
  var fields = { action: action };
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

function onCashIn(event) {
  event.preventDefault();
  var input = $("cash-in-amount");
  var amount = input.value.trim().replace(",", ".");
  if (!/^[0-9]+(\.[0-9]{1,2})?$/.test(amount)) {
    showStatus("Enter an amount such as 50 or 12.50.", true);
    input.focus();
    return;
  }
  send("cash_in", { amount: amount });
}

// --- drawing --------------------------------------------------------------------------

function formatMoney(value) {
  if (value === null || value === undefined || value === "") return "–";
  return money ? money.format(Number(value)) : String(value);
}

function formatChip(value) {
  var number = Number(value);
  var formatter = Number.isInteger(number) && chipMoney ? chipMoney : money;
  return formatter ? formatter.format(number) : String(value);
}

function betName(code) {
  return BET_NAMES[code] || code.replace(/_/g, " ").replace(/^./, function (c) {
    return c.toUpperCase();
  });
}

function cardNode(code) {
  if (code === "face_down") {
    return el("span", { className: "card back", role: "img", "aria-label": "card face down" });
  }
  var rank = code.charAt(0);
  var suit = code.charAt(1);
  return el("span", {
    className: "card" + (suit === "H" || suit === "D" ? " red" : ""),
    role: "img",
    "aria-label": RANK_NAMES[rank] + " of " + SUIT_NAMES[suit],
    text: (RANKS[rank] || rank) + SUITS[suit],
  });
}

function cardsNode(cards, extraClass) {
  var box = el("div", { className: "cards" + (extraClass ? " " + extraClass : "") });
  (cards || []).forEach(function (card) {
    box.appendChild(cardNode(card));
  });
  return box;
}

var spots = {}; // "box:code" -> {button, stake, result}
var boxNodes = {}; // box -> {panel, cards, actions}
var chipButtons = [];

function build(info) {
  var key = JSON.stringify([info.currency, info.boxes, info.chips, info.special_bets]);
  if (key === builtFor) return;
  builtFor = key;
  try {
    money = new Intl.NumberFormat(undefined, { style: "currency", currency: info.currency });
    chipMoney = new Intl.NumberFormat(undefined, {
      style: "currency",
      currency: info.currency,
      minimumFractionDigits: 0,
      maximumFractionDigits: 0,
    });
  } catch (e) {
    // an unknown currency code: amounts without a symbol
    money = new Intl.NumberFormat(undefined, {
      minimumFractionDigits: 2,
      maximumFractionDigits: 2,
    });
    chipMoney = null;
  }

  var chips = $("chips");
  chips.textContent = "";
  chipButtons = info.chips.map(function (chip, i) {
    var button = el("button", {
      type: "button",
      className: "chip chip-" + (i % 6),
      "aria-pressed": "false",
      "data-chip": chip,
      text: formatChip(chip),
    });
    // the selected chip's tick: seen, not read out (aria-pressed says it)
    button.appendChild(el("span", { className: "chip-mark", "aria-hidden": "true", text: "✓" }));
    button.addEventListener("click", function () {
      selectedChip = chip;
      render();
    });
    chips.appendChild(button);
    return button;
  });
  if (info.chips.indexOf(selectedChip) < 0) selectedChip = info.chips[0] || null;

  var boxes = $("boxes");
  boxes.textContent = "";
  spots = {};
  boxNodes = {};
  for (var box = 1; box <= info.boxes; box++) {
    boxes.appendChild(buildBox(box, info));
  }
}

function buildBox(box, info) {
  var heading = el("h3", { id: "box-" + box + "-heading", text: "Box " + box });
  var cards = el("div", { className: "box-cards" });
  var spotsNode = el("div", { className: "spots" });
  ["main"].concat(info.special_bets).forEach(function (code) {
    var stake = el("span", { className: "spot-stake" });
    var result = el("span", { className: "spot-result" });
    var button = el(
      "button",
      { type: "button", className: "spot" + (code === "main" ? " main" : " special") },
      [el("span", { className: "spot-name", text: betName(code) }), stake, result]
    );
    button.addEventListener("click", function () {
      onSpot(box, code);
    });
    spotsNode.appendChild(button);
    spots[box + ":" + code] = {
      button: button, stake: stake, result: result, box: box, code: code,
    };
  });
  var betAll = el("button", { type: "button", className: "box-action", text: "Bet all" });
  betAll.setAttribute("aria-label", "Bet all on box " + box);
  betAll.addEventListener("click", function () {
    if (selectedChip) send("bet_all", { box: box, amount: selectedChip });
  });
  var letItPlay = el("button", { type: "button", className: "box-action", text: "Let it play" });
  letItPlay.setAttribute("aria-label", "Let it play on box " + box);
  letItPlay.addEventListener("click", function () {
    send("let_it_play", { box: box });
  });
  var actions = el("div", { className: "box-actions" }, [betAll, letItPlay]);
  var panel = el(
    "section",
    { className: "box", "aria-labelledby": "box-" + box + "-heading", "data-box": String(box) },
    [heading, cards, spotsNode, actions]
  );
  boxNodes[box] = { panel: panel, cards: cards, actions: [betAll, letItPlay] };
  return panel;
}

function render() {
  if (!state) {
    renderControls();
    return;
  }
  if (state.info) {
    build(state.info);
    $("table-name").textContent = state.info.table;
  }
  renderMeters();
  renderPhase();
  renderTable();
  renderSpots();
  renderControls();
  renderWin();
  renderHistory();
  tick();
}

function renderMeters() {
  $("credits").textContent = formatMoney(state.credits);
  $("last-bet").textContent = formatMoney(state.last_bet);
  $("last-win").textContent = formatMoney(state.last_win);
}

function renderPhase() {
  var p = phase();
  $("phase").textContent = p ? PHASES[p] || p : "Waiting for the next round";
  var t = table();
  var awaiting = t && p !== "settled" ? t.awaiting : "";
  $("awaiting").textContent = awaiting ? "Croupier: " + awaiting : "";
}

// The round to draw: the state's, or until it is dealt the one before it (when that is
// the table's newest settled round, or is still settling).
function shownView() {
  if (state && state.table) return { view: state, last: false };
  var newest = state && state.dealer_history ? state.dealer_history[0] : null;
  if (previous && previous.table && (!newest || newest.round <= previous.round.id)) {
    return { view: previous, last: true };
  }
  return null;
}

function renderTable() {
  var shown = shownView();
  var t = shown ? shown.view.table : null;
  $("round-caption").textContent = shown && shown.last ? "Last round" : "";
  var dealer = $("dealer-cards");
  dealer.textContent = "";
  var dealerCards = t ? (t.dealer.cards || []).slice() : [];
  if (t && t.dealer.hole_card === "face_down") dealerCards.push("face_down");
  dealerCards.forEach(function (card) {
    dealer.appendChild(cardNode(card));
  });
  var total = "";
  if (t && t.dealer.total !== undefined) {
    if (t.dealer.blackjack) total = "Blackjack";
    else if (t.dealer.bust || t.dealer.total > 21) total = t.dealer.total + ", bust";
    else total = String(t.dealer.total);
  }
  $("dealer-total").textContent = total;

  var mineShown = t && t.station ? t.station : null;
  var p = shown && !shown.last ? prompt() : null;
  Object.keys(boxNodes).forEach(function (key) {
    var box = Number(key);
    var node = boxNodes[box].cards;
    node.textContent = "";
    var hands = mineShown ? mineShown.hands.filter(function (h) { return h.box === box; }) : [];
    if (hands.length) {
      hands.forEach(function (hand, i) {
        node.appendChild(handNode(hand, i, hands.length, p));
      });
    } else if (t && t.boxes && t.boxes[key] && t.boxes[key].length) {
      node.appendChild(cardsNode(t.boxes[key], "public"));
    }
    boxNodes[box].panel.classList.toggle("asked", Boolean(p && p.box === box));
  });
}

function handNode(hand, i, count, p) {
  var asked = Boolean(p && p.hand === hand.id);
  var total = hand.cards.length ? (hand.soft ? "soft " : "") + hand.total : "";
  var parts = [
    cardsNode(hand.cards),
    el("p", { className: "hand-line" }, [
      el("span", { className: "hand-total", text: total }),
      el("span", { className: "hand-stake", text: "Stake " + formatMoney(hand.stake) }),
    ]),
  ];
  if (hand.result) {
    parts.push(
      el("p", {
        className: "hand-result result-" + hand.result,
        text: (RESULTS[hand.result] || hand.result) + " · returned " + formatMoney(hand.returned),
      })
    );
  }
  var node = el(
    "div",
    {
      className: "hand" + (asked ? " asked" : ""),
      "aria-label": count > 1 ? "Your hand " + (i + 1) + " of " + count : "Your hand",
      role: "group",
    },
    parts
  );
  if (asked) node.setAttribute("aria-current", "true");
  return node;
}

function renderSpots() {
  var stakes = {};
  (state.bets || []).forEach(function (bet) {
    stakes[bet.box + ":" + bet.bet] = bet.stake;
  });
  var roundId = state.round ? state.round.id : null;
  Object.keys(spots).forEach(function (key) {
    var spot = spots[key];
    var stake = stakes[key];
    spot.stake.textContent = stake ? formatMoney(stake) : "";
    spot.button.classList.toggle("has-stake", Boolean(stake));
    var returned = specialResults[roundId + ":" + key];
    spot.result.textContent =
      spot.code !== "main" && stake && returned !== undefined
        ? Number(returned) > 0 ? "Returned " + formatMoney(returned) : "Lost"
        : "";
    var label = "Box " + spot.box + " " + betName(spot.code).toLowerCase();
    if (stake) label += ", " + formatMoney(stake) + " staked";
    spot.button.setAttribute("aria-label", label);
  });
}

function renderControls() {
  var betting = joined && phase() === "betting";
  chipButtons.forEach(function (button) {
    var on = button.dataset.chip === selectedChip;
    button.setAttribute("aria-pressed", on ? "true" : "false");
  });
  Object.keys(spots).forEach(function (key) {
    spots[key].button.disabled = !betting || !selectedChip;
  });
  Object.keys(boxNodes).forEach(function (key) {
    boxNodes[key].actions.forEach(function (button) {
      button.disabled = !betting;
    });
  });
  root.querySelectorAll(".bet-controls [data-command]").forEach(function (button) {
    button.disabled = !betting;
  });
  root.querySelectorAll(".money button").forEach(function (button) {
    button.disabled = !joined;
  });

  var halted = Boolean(state && state.round && state.round.halted);
  var p = joined && !halted ? prompt() : null;
  var allowed = p ? p.allowed : [];
  root.querySelectorAll("[data-action]").forEach(function (button) {
    button.disabled = allowed.indexOf(button.dataset.action) < 0;
  });
  $("picks").hidden = !(p && p.kind === "bonus_pick");
  $("prompt-text").textContent = halted ? "Halted: wait for the supervisor" : promptText(p);
  renderDispute(halted);
}

function renderDispute(halted) {
  var note = $("halted");
  var text = halted ? "Round " + state.round.id + " is halted: a dispute waits for the supervisor." : "";
  note.hidden = !halted;
  if (note.textContent !== text) note.textContent = text;
  var d = joined && state ? state.dispute : null;
  $("dispute-button").disabled = !d || d.halted;
  var about = "Nothing to dispute now";
  if (d && d.halted) about = "Round " + d.round + " is under review.";
  else if (d && d.until) {
    about = "Round " + d.round + " can be disputed until " +
      new Date(Date.parse(d.until) - clockOffset).toLocaleTimeString() + ".";
  } else if (d) about = "Round " + d.round + " can be disputed.";
  $("dispute-text").textContent = about;
}

function promptText(p) {
  if (!p) return "No question open";
  if (p.kind === "insurance") return "Box " + p.box + ": insurance?";
  if (p.kind === "even_money") return "Box " + p.box + ": even money?";
  if (p.kind === "bonus_pick") return "Box " + p.box + ": pick a card for the In For 6 bonus";
  return "Box " + p.box + ": your decision";
}

function renderWin() {
  var node = $("win");
  var shown = shownView();
  // the win of the last settled round, while that round is on screen
  var show = Boolean(
    state.win &&
      shown &&
      shown.view.round.phase === "settled" &&
      shown.view.round.id === state.last_round
  );
  var text = "";
  if (show) {
    var amount = formatMoney(state.last_win);
    if (state.win === "big") text = "Big win! " + amount;
    else if (state.win === "nice") text = "Nice win! " + amount;
    else text = "You win " + amount;
  }
  if (node.textContent !== text) node.textContent = text;
  node.className = "win" + (show ? " win-" + state.win : "");
}

function renderHistory() {
  var list = $("dealer-history");
  list.textContent = "";
  (state.dealer_history || []).forEach(function (h) {
    var text = h.blackjack ? "BJ" : String(h.total);
    var label = h.blackjack ? "blackjack" : h.bust ? h.total + ", bust" : String(h.total);
    list.appendChild(
      el("li", {
        className: "outcome" + (h.bust ? " bust" : "") + (h.blackjack ? " bj" : ""),
        title: "Round " + h.round + ": " + label,
        "aria-label": "Round " + h.round + ": " + label,
        text: text,
      })
    );
  });
  var stats = $("dealer-stats");
  stats.textContent = "";
  var s = state.dealer_stats;
  var rows = [["Rounds", s ? String(s.rounds) : "0"]];
  if (s && s.rounds) {
    rows = rows.concat([
      ["Bust", s.bust_percent + "% (" + s.bust + ")"],
      ["Blackjacks", String(s.blackjack)],
    ]);
    ["17", "18", "19", "20", "21"].forEach(function (total) {
      rows.push([total, String(s.totals[total])]);
    });
    rows.push(["Under 17", String(s.under_17)]);
  }
  rows.forEach(function (row) {
    stats.appendChild(
      el("div", { className: "stat" }, [el("dt", { text: row[0] }), el("dd", { text: row[1] })])
    );
  });

  var body = $("player-history");
  body.textContent = "";
  (state.player_history || []).forEach(function (h) {
    var net = Number(h.net);
    body.appendChild(
      el("tr", { className: net > 0 ? "up" : net < 0 ? "down" : "" }, [
        el("td", { text: String(h.round) }),
        el("td", { text: formatMoney(h.staked) }),
        el("td", { text: formatMoney(h.returned) }),
        el("td", { text: formatMoney(h.net) }),
      ])
    );
  });
}

// --- the step timer -------------------------------------------------------------------

function tick() {
  var timer = $("timer");
  var value = $("timer-value");
  var dispute = state ? state.dispute : null;
  if (dispute && dispute.until && Date.parse(dispute.until) <= Date.now() + clockOffset) {
    $("dispute-button").disabled = true; // the window has closed: the result is final
  }
  var deadline = state && state.round ? state.round.deadline : null;
  if (!deadline || !joined) {
    timer.dataset.active = "false";
    if (value.textContent !== "–") value.textContent = "–";
    return;
  }
  var left = Math.max(0, Math.ceil((Date.parse(deadline) - (Date.now() + clockOffset)) / 1000));
  var text = left + " s";
  timer.dataset.active = "true";
  timer.dataset.urgent = left <= 5 ? "true" : "false";
  if (value.textContent !== text) value.textContent = text;
}

// --- messages on screen ---------------------------------------------------------------

function setConnection(kind, text) {
  var node = $("connection");
  node.dataset.state = kind;
  node.textContent = text;
}

function showAlert(text, kind, clearAfter) {
  clearTimeout(alertTimer);
  var node = $("alert");
  node.textContent = text;
  node.dataset.kind = kind;
  if (clearAfter) alertTimer = setTimeout(clearAlert, clearAfter);
}

function clearAlert() {
  clearTimeout(alertTimer);
  $("alert").textContent = "";
}

function showStatus(text, isError) {
  var node = $("status");
  node.textContent = text || "";
  node.classList.toggle("error", Boolean(isError));
}

function showError(error) {
  error = error || {};
  var message = error.message || "The table refused the command.";
  showStatus(message + " (" + (error.code || "error") + ")", true);
}

function showCredentialForm(message) {
  var form = $("credential-form");
  form.hidden = false;
  $("credential-error").textContent = message || "";
  $("credential-error").setAttribute("role", message ? "alert" : "note");
  $("credential-input").focus();
}

// --- start ----------------------------------------------------------------------------

function start() {
  $("credential-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var value = $("credential-input").value.trim();
    if (!value) return;
    saveCredential(value);
    $("credential-input").value = "";
    $("credential-form").hidden = true;
    stopped = false;
    attempts = 0;
    connect();
  });
  $("cash-in-form").addEventListener("submit", onCashIn);
  root.querySelector(".cash-out").addEventListener("click", function () {
    send("cash_out");
  });
  root.querySelectorAll(".bet-controls [data-command]").forEach(function (button) {
    button.addEventListener("click", function () {
      onBetCommand(button.dataset.command);
    });
  });
  root.querySelectorAll("[data-action]").forEach(function (button) {
    button.addEventListener("click", function () {
      onDecision(button.dataset.action);
    });
  });
  $("dispute-button").addEventListener("click", function () {
    if (state && state.dispute) send("dispute", { round: state.dispute.round });
  });
  window.addEventListener("hashchange", function () {
    if (/credential=/.test(window.location.hash)) {
      credentialFromFragment();
      stopped = false;
      $("credential-form").hidden = true;
      if (socket) socket.close();
      else connect();
    }
  });

  setInterval(tick, 250);
  // No polling: a new round announces itself (a "phase": "betting" event of a newer round).

  credentialFromFragment();
  render();
  connect();
}

if (root) start();
