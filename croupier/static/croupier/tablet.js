/* The croupier tablet: plain JavaScript, an ES module, over the croupier socket
   (docs/croupier.md).
   Every command gets one reply carrying the new state; table events and croupier messages
   (reader errors) arrive in between and make the page ask for the state again. */
import { clockText, format, gettext } from "../tablehub/i18n.js";
import { cardLabel, dealerError, promptWords } from "./words.js";

const config = JSON.parse(document.getElementById("tablet-config").textContent);
const $ = (id) => document.getElementById(id);
const SUITS = {
  S: ["♠", gettext("spades")], H: ["♥", gettext("hearts")], D: ["♦", gettext("diamonds")],
  C: ["♣", gettext("clubs")],
};
const RANKS = { A: gettext("ace"), T: "10", J: gettext("jack"), Q: gettext("queen"), K: gettext("king") };
const IN_PLAY = ["deal", "bonus", "insurance", "play", "dealer"];
const PHASES = {
  betting: gettext("betting"), deal: gettext("deal"), bonus: gettext("bonus"),
  insurance: gettext("insurance"), play: gettext("play"), dealer: gettext("dealer"),
  settled: gettext("settled"), void: gettext("void"),
};
const MODES = { dealer: gettext("dealer"), video: gettext("video") };
const DONE = {
  open_table: gettext("Table open"),
  close_table: gettext("Table closed: no new round after this one"),
  close_bets: gettext("Bets closed"), deal: gettext("Card dealt"), burn: gettext("Card burned"),
  manual_card: gettext("Card entered"), new_shoe: gettext("New shoe started"),
  void_round: gettext("Round voided"), correct_card: gettext("Card corrected"),
  discard_card: gettext("Card discarded"), resolve_dispute: gettext("Dispute resolved"),
};

let socket = null;
let state = null;
let connected = false;
let everConnected = false;
let retries = 0;
let counter = 0;
let clockOffset = 0; // server time minus this device's time, in ms
let refreshTimer = null;
const pending = new Map(); // client_id -> {resolve, type}

// -- the socket ------------------------------------------------------------------------

function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  socket = new WebSocket(scheme + location.host + config.socket);
  socket.addEventListener("open", () => {
    connected = true;
    retries = 0;
    setConnection(everConnected ? gettext("Reconnected") : gettext("Connected"), "good");
    everConnected = true;
    render();
  });
  socket.addEventListener("message", (e) => {
    let frame;
    try { frame = JSON.parse(e.data); } catch { return; }
    onFrame(frame);
  });
  socket.addEventListener("close", (e) => {
    connected = false;
    for (const [, p] of pending) p.resolve(null);
    pending.clear();
    if (e.code === 4401) { location.href = config.login; return; }
    if (e.code === 4403 || e.code === 4404) {
      setConnection(
        e.code === 4403 ? gettext("Not allowed for this login") : gettext("No such table"), "bad"
      );
      render();
      return;
    }
    setConnection(gettext("Connection lost: reconnecting…"), "bad");
    render();
    const delay = Math.min(5000, 500 * 2 ** retries);
    retries += 1;
    setTimeout(connect, delay);
  });
}

function setConnection(text, tone) {
  const el = $("connection");
  el.textContent = text;
  el.className = `pill ${tone || ""}`;
}

function send(type, fields) {
  if (!connected) return Promise.resolve(null);
  counter += 1;
  const clientId = `t${Date.now().toString(36)}-${counter}`;
  const message = Object.assign({ type: type, client_id: clientId }, fields || {});
  return new Promise((resolve) => {
    pending.set(clientId, { resolve: resolve, type: type });
    socket.send(JSON.stringify(message));
    render();
  });
}

function onFrame(frame) {
  if (frame.type === "state") {
    setState(frame.state);
  } else if (frame.type === "reply") {
    const p = pending.get(frame.client_id);
    if (frame.ok && frame.state) setState(frame.state);
    if (p) {
      pending.delete(frame.client_id);
      p.resolve(frame);
    }
    render();
  } else if (frame.type === "reader_error") {
    showReaderError(frame);
    refreshSoon();
  } else if (frame.type === "supervisor_alert") {
    status(format(gettext("Supervisor alert %(alert)s: %(message)s"), {
      alert: frame.alert, message: frame.message,
    }));
  } else if (frame.type === "tip") {
    status(format(gettext("Station %(station)s tipped the dealer %(amount)s %(currency)s"), {
      station: frame.station, amount: frame.amount, currency: frame.currency,
    }));
  } else if (frame.type === "event" || frame.type === "changed") {
    const event = frame.type === "event" ? frame.event || {} : {};
    if (event.type === "step") stepAsked[`${frame.round}:${event.step}`] = event.stations_asked;
    if (event.type === "void") {
      status(format(gettext("%(round)s void: %(reason)s"), {
        round: roundName(frame.round), reason: event.reason,
      }));
    } else if (event.type === "halted") {
      status(format(gettext("%(round)s halted: a station disputes it. Call a supervisor."), {
        round: roundName(event.round),
      }));
    } else if (event.type === "resumed") {
      status(format(gettext("%(round)s goes on (%(resolution)s)"), {
        round: roundName(event.round), resolution: RESOLUTIONS[event.resolution] || event.resolution,
      }));
    } else if (event.type === "corrected") {
      status(format(gettext("%(round)s: card %(positions)s corrected"), {
        round: roundName(event.round), positions: event.positions.join(", "),
      }));
    } else if (event.type === "betting_restarted") {
      status(gettext("No station bet in time: betting is open again (the stations see the new time)"));
    } else if (event.type === "seat_left") {
      status(format(gettext("%(station)s left seat %(seat)s: the table answers for the seat"), {
        station: event.station, seat: event.box,
      }));
    } else if (event.type === "table_status") {
      status(event.open
        ? gettext("The table is open")
        : gettext("The table is closed: no new round after this"));
    } else if (event.type === "shoe_changed") {
      status(format(gettext("New shoe: %(decks)s decks"), { decks: event.decks }));
    } else if (event.type === "shoe_committed") {
      status(format(gettext("Virtual shoe shuffled: commitment %(commitment)s"), {
        commitment: event.commitment,
      }));
    } else if (event.type === "shoe_revealed") {
      status(format(gettext("Virtual shoe %(shuffle)s revealed: its seed and order can be checked"), {
        shuffle: event.shuffle,
      }));
    }
    refreshSoon();
  }
}

function refreshSoon() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    send("state");
  }, 120);
}

// -- commands ------------------------------------------------------------------------

async function command(type, fields) {
  hideError();
  const reply = await send(type, fields);
  if (reply === null) {
    showError(gettext("The connection dropped before the reply: check the table before trying again."));
    return null;
  }
  if (reply.ok) {
    let text = DONE[type] || "";
    if (reply.scan) text += format(gettext(" (reader seq %(seq)s)"), { seq: reply.scan.seq });
    status(text);
  } else {
    showError(dealerError(reply.error));
  }
  return reply;
}

document.querySelectorAll("[data-command]").forEach((button) => {
  button.addEventListener("click", () => command(button.dataset.command));
});

$("manual-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const card = $("manual-rank").value + $("manual-suit").value;
  const reply = await command("manual_card", { card: card, burn: $("manual-burn").checked });
  if (reply?.ok) $("manual-burn").checked = false;
});

$("reader-error-dismiss").addEventListener("click", () => {
  $("reader-error").hidden = true;
});

// -- supervisor actions ----------------------------------------------------------------

const dialog = $("supervisor-dialog");
const ACTIONS = {
  void_round: gettext("Void round"), correct_card: gettext("Correct card"),
  discard_card: gettext("Discard card"), resolve_dispute: gettext("Resolve dispute"),
};
const RESOLUTIONS = {
  continue: gettext("continue"), correct: gettext("correct"), void: gettext("void"),
};
let action = null;
let target = null; // the round the action is about (its cards fill "Card to correct")

// The round whose cards a correction names: the one being dealt, else the last one.
function correctable() {
  const s = state;
  if (!s) return null;
  if (s.round?.cards.length) return s.round;
  return s.previous?.cards.length ? s.previous : null;
}

// Rounds count per table (Round 1, 2, ...); events and disputes name a round by its id,
// which counts across tables: the state's rounds tell the numbers.
const roundNumbers = {};

function learnRoundNumbers(s) {
  [s?.round, s?.previous].forEach((r) => {
    if (r?.number) roundNumbers[r.id] = r.number;
  });
}

function roundName(id) {
  return roundNumbers[id]
    ? format(gettext("Round %(number)s"), { number: roundNumbers[id] })
    : gettext("The round");
}

// How many stations each step asked when it opened (its "step" event), by round and step:
// the tablet then shows how many answered and how many are still deciding.
const stepAsked = {};

function stationsText(round, view) {
  const playing = round.stations_playing;
  const deciding = view ? view.stations_asked : 0;
  const asked = view ? stepAsked[`${round.id}:${view.step}`] : undefined;
  if (!deciding && asked === undefined) {
    return format(gettext("%(playing)s playing · %(done)s done"), {
      playing: playing, done: round.stations_done,
    });
  }
  const answered = asked === undefined ? round.stations_done : Math.max(asked - deciding, 0);
  return format(gettext("%(playing)s playing · step %(step)s: %(answered)s answered · %(deciding)s deciding"), {
    playing: playing, step: view.step, answered: answered, deciding: deciding,
  });
}

// The round with the open dispute (the table's first one).
function disputed() {
  const s = state;
  const open = s?.disputes?.length ? s.disputes[0] : null;
  if (!open) return null;
  if (s.round && s.round.id === open.round) return s.round;
  if (s.previous && s.previous.id === open.round) return s.previous;
  return { id: open.round, cards: [] };
}

function fillPositions(round) {
  const select = $("correct-position");
  select.replaceChildren();
  (round ? round.cards : []).forEach((c) => {
    const option = document.createElement("option");
    option.value = String(c.n);
    option.textContent = `${c.n}. ${c.card ? cardText(c.card) : gettext("face down")} → ${cardLabel(c.label, Boolean(state?.seating))}`;
    select.append(option);
  });
}

function showFields() {
  const resolution = document.querySelector("input[name=resolution]:checked").value;
  const dispute = action === "resolve_dispute";
  $("resolution-field").hidden = !dispute;
  $("card-field").hidden = !(action === "correct_card" || (dispute && resolution === "correct"));
  $("discard-field").hidden = action !== "discard_card";
  const needsReason = action === "void_round" || action === "discard_card"
    || (dispute && resolution === "void");
  $("reason-field").hidden = !(needsReason || action === "correct_card" || dispute);
  $("supervisor-reason").required = needsReason;
  $("correct-card").disabled = $("correct-out").checked;
}

document.querySelectorAll("input[name=resolution]").forEach((radio) => {
  radio.addEventListener("change", showFields);
});
$("correct-out").addEventListener("change", showFields);

document.querySelectorAll("[data-supervisor]").forEach((button) => {
  button.addEventListener("click", () => {
    action = button.dataset.supervisor;
    $("supervisor-title").textContent = format(gettext("Supervisor approval: %(action)s"), {
      action: ACTIONS[action],
    });
    const round = state?.round;
    target = action === "resolve_dispute" ? disputed()
      : action === "correct_card" ? correctable() : round;
    let what = format(gettext("%(action)s needs a supervisor's login."), { action: ACTIONS[action] });
    if (action === "void_round" && round) {
      what = format(gettext("Void round %(number)s: every stake goes back to the stations."), {
        number: round.number,
      });
    } else if (action === "correct_card" && target) {
      what = format(gettext("Correct a card of %(round)s: the round is replayed with it."), {
        round: roundName(target.id).toLowerCase(),
      });
    } else if (action === "resolve_dispute" && target) {
      const open = state.disputes[0];
      what = format(gettext("Station %(station)s disputes %(round)s."), {
        station: open.station, round: roundName(open.round).toLowerCase(),
      });
    } else if (action === "discard_card") {
      what = gettext("A card that left the shoe without being read and is not used.");
    }
    $("supervisor-what").textContent = what;
    fillPositions(target);
    $("correct-out").checked = false;
    $("supervisor-error").hidden = true;
    $("supervisor-password").value = "";
    showFields();
    dialog.showModal();
    $("supervisor-username").focus();
  });
});

$("supervisor-cancel").addEventListener("click", () => dialog.close());
dialog.addEventListener("close", () => {
  $("supervisor-password").value = ""; // also when closed with Escape
});

$("supervisor-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const fields = { supervisor: { username: $("supervisor-username").value,
    password: $("supervisor-password").value } };
  const reason = $("supervisor-reason").value;
  if (action === "void_round") {
    fields.reason = reason;
    if (state?.round) fields.round = state.round.id;
  } else if (action === "discard_card") {
    fields.reason = reason;
    if ($("discard-card").value) fields.card = $("discard-card").value;
  } else {
    if (reason) fields.reason = reason;
    if (target) fields.round = target.id;
    if (action === "resolve_dispute") {
      fields.resolution = document.querySelector("input[name=resolution]:checked").value;
    }
    if (action === "correct_card" || fields.resolution === "correct") {
      fields.position = Number($("correct-position").value);
      if ($("correct-out").checked) fields.burn = true;
      else fields.card = $("correct-card").value;
    }
  }
  $("supervisor-password").value = "";
  const reply = await send(action, fields);
  if (reply?.ok) {
    dialog.close();
    $("supervisor-reason").value = "";
    status(DONE[action] || gettext("Done"));
    return;
  }
  const el = $("supervisor-error");
  el.textContent = reply ? dealerError(reply.error)
    : gettext("The connection dropped: try again once it is back.");
  el.hidden = false;
});

// -- messages ------------------------------------------------------------------------

function showReaderError(frame) {
  $("reader-error-text").textContent = format(gettext("%(error)s at %(time)s"), {
    error: dealerError(frame), time: clockText(new Date()),
  });
  $("reader-error").hidden = false;
}

function showError(text) {
  const el = $("command-error");
  el.textContent = text;
  el.hidden = false;
}

function hideError() {
  $("command-error").hidden = true;
}

function status(text) {
  $("command-status").textContent = text;
}

// -- drawing -------------------------------------------------------------------------

function setState(next) {
  state = next;
  learnRoundNumbers(next);
  if (next.now) clockOffset = Date.parse(next.now) - Date.now();
  render();
}

function cardText(text) {
  const suit = SUITS[text[1]] || ["?", text[1]];
  return (text[0] === "T" ? "10" : text[0]) + suit[0];
}

function cardSpan(text) {
  const span = document.createElement("span");
  span.className = "card";
  if (!text) {
    span.classList.add("down");
    span.textContent = gettext("face down");
    return span;
  }
  const rank = text[0];
  const suit = SUITS[text[1]] || ["?", text[1]];
  span.textContent = (rank === "T" ? "10" : rank) + suit[0];
  span.title = format(gettext("%(rank)s of %(suit)s"), { rank: RANKS[rank] || rank, suit: suit[1] });
  if (text[1] === "H" || text[1] === "D") span.classList.add("red");
  return span;
}

function fillCards(el, cards, holeDown) {
  el.replaceChildren();
  (cards || []).forEach((c) => {
    el.append(cardSpan(c));
  });
  if (holeDown) el.append(cardSpan(null));
  if (!el.childNodes.length) el.textContent = gettext("none");
}

function render() {
  const busy = pending.size > 0 && Array.from(pending.values()).some((p) => p.type !== "state");
  const s = state;
  const table = s ? s.table : null;
  const round = s ? s.round : null;
  const phase = round ? round.phase : null;
  const view = round ? round.view : null;

  if (table) {
    $("table-status").textContent = format(gettext("%(status)s · %(mode)s · %(currency)s"), {
      status: table.is_open ? gettext("Open") : gettext("Closed"),
      mode: MODES[table.mode] || table.mode, currency: table.currency,
    });
    $("table-status").className = `pill ${table.is_open ? "good" : ""}`;
  }
  $("prompt").textContent = s ? promptWords(s.awaiting, Boolean(s.seating)) : "…";

  const none = gettext("none");
  let roundText = none;
  if (round) {
    const fields = { number: round.number, phase: PHASES[phase] || phase, step: view?.step };
    roundText = view?.step
      ? format(gettext("Round %(number)s · %(phase)s · step %(step)s"), fields)
      : format(gettext("Round %(number)s · %(phase)s"), fields);
  }
  $("round-info").textContent = roundText;
  $("stations-info").textContent = round ? stationsText(round, view) : none;
  $("hands-info").textContent = round?.hands
    ? format(gettext("%(finished)s of %(hands)s finished"), {
      finished: round.hands_finished, hands: round.hands,
    })
    : none;
  $("shoe-info").textContent = s?.shoe
    ? format(gettext("Shoe %(id)s · %(decks)s decks · %(drawn)s cards drawn · reader seq %(seq)s"), {
      id: s.shoe.id, decks: s.shoe.decks, drawn: s.shoe.cards_drawn, seq: s.shoe.reader_seq,
    })
    : gettext("not started");
  // The virtual shoe's commitment (docs/integrity.md): a card reader's shoe has none.
  $("commitment-info").textContent = s?.virtual_shoe
    ? format(gettext("shuffle %(shuffle)s: %(commitment)s"), {
      shuffle: s.virtual_shoe.shuffle, commitment: s.virtual_shoe.commitment,
    })
    : gettext("none (no virtual shoe dealing)");

  const prev = s ? s.previous : null;
  const last = $("last-round");
  if (prev && prev.phase === "settled" && prev.dealer) {
    const fields = { number: prev.number, total: prev.dealer.total };
    if (prev.dealer.blackjack) {
      last.textContent = format(gettext("Last round %(number)s: dealer %(total)s (blackjack). Pay and clear."), fields);
    } else if (prev.dealer.bust) {
      last.textContent = format(gettext("Last round %(number)s: dealer %(total)s (bust). Pay and clear."), fields);
    } else {
      last.textContent = format(gettext("Last round %(number)s: dealer %(total)s. Pay and clear."), fields);
    }
    last.hidden = false;
  } else if (prev && prev.phase === "void" && prev.void) {
    last.textContent = format(gettext("Last round %(number)s void: %(reason)s"), {
      number: prev.number, reason: prev.void.reason,
    });
    last.hidden = false;
  } else if (round && phase === "void" && round.void) {
    last.textContent = format(gettext("Round %(number)s void: %(reason)s"), {
      number: round.number, reason: round.void.reason,
    });
    last.hidden = false;
  } else {
    last.hidden = true;
  }

  // The table: dealer and boxes (of the round, or of the last round while bets are open).
  const shown = view ? round : prev?.view ? prev : round;
  const shownView = shown ? shown.view : null;
  fillCards($("dealer-cards"), shownView ? shownView.dealer.cards : [],
    shownView && shownView.dealer.hole_card === "face_down");
  if (shownView && shownView.dealer.total !== undefined) {
    const d = shownView.dealer;
    const total = document.createElement("span");
    total.className = "total";
    const word = d.blackjack ? ` ${gettext("blackjack")}` : d.total > 21 ? ` ${gettext("bust")}` : "";
    total.textContent = `= ${d.total}${word}`;
    $("dealer-cards").append(total);
  }
  const boxes = $("boxes");
  boxes.replaceChildren();
  const count = table ? table.boxes : config.boxes;
  const seating = s ? s.seating : null;
  const betOn = seating ? seating.bet : round?.boxes_bet ? round.boxes_bet : [];
  for (let b = 1; b <= count; b += 1) {
    const li = document.createElement("li");
    if (betOn.includes(b)) li.classList.add("bet");
    const label = document.createElement("span");
    label.className = "label";
    if (seating) {
      label.textContent = betOn.includes(b)
        ? format(gettext("Seat %(seat)s · bet"), { seat: b })
        : format(gettext("Seat %(seat)s"), { seat: b });
    } else {
      label.textContent = betOn.includes(b)
        ? format(gettext("Box %(box)s · bet"), { box: b })
        : format(gettext("Box %(box)s"), { box: b });
    }
    const cards = document.createElement("div");
    cards.className = "cards";
    fillCards(cards, shownView?.boxes[String(b)] ? shownView.boxes[String(b)] : [], false);
    li.append(label, document.createElement("br"));
    if (seating) li.append(seatLine(seating, view, b, li), document.createElement("br"));
    li.append(cards);
    boxes.append(li);
  }
  renderSeating(seating);
  const stations = $("stations");
  stations.replaceChildren();
  (round ? round.stations : []).forEach((st) => {
    const li = document.createElement("li");
    const doing = phase === "betting" ? gettext("bet") : st.done ? gettext("done") : gettext("deciding");
    li.textContent = `${st.station} · ${doing}`;
    stations.append(li);
  });

  // The cards scanned, with where each went.
  const listed = round?.cards.length ? round : prev?.cards.length ? prev : round;
  const list = $("card-list");
  list.replaceChildren();
  const cards = listed ? listed.cards : [];
  cards.forEach((c) => {
    const li = document.createElement("li");
    li.append(cardSpan(c.card), ` → ${cardLabel(c.label, Boolean(s?.seating))}`);
    if (c.corrected_from) {
      li.append(format(gettext(" (corrected; read as %(card)s)"), { card: cardText(c.corrected_from) }));
    }
    list.append(li);
  });
  $("no-cards").hidden = cards.length > 0;
  $("cards-heading").textContent = listed && listed !== round
    ? format(gettext("Cards of round %(number)s (last round)"), { number: listed.number })
    : listed
      ? format(gettext("Cards of round %(number)s"), { number: listed.number })
      : gettext("Cards this round");

  // What may be pressed now.
  const live = connected && !busy;
  const isOpen = table?.is_open;
  setEnabled("open-table", live && (!isOpen || !round || ["settled", "void"].includes(phase)));
  setEnabled("close-table", live && isOpen);
  setEnabled("close-bets", live && phase === "betting");
  setEnabled("deal", live && round && !!round.card_for);
  const onlyBurns = round?.cards.every((c) => c.to === "burn");
  setEnabled("burn", live && phase === "deal" && onlyBurns);
  setEnabled("new-shoe", live && !IN_PLAY.includes(phase));
  setEnabled("manual-submit", live);
  const open = s?.disputes ? s.disputes : [];
  document.querySelectorAll("[data-supervisor]").forEach((button) => {
    const openWindow = round?.dispute_until
      && Date.parse(round.dispute_until) > Date.now() + clockOffset;
    const voidable = round && (!["settled", "void"].includes(phase)
      || (phase === "settled" && (round.halted || openWindow)));
    const allowed = {
      void_round: voidable,
      correct_card: !!correctable(),
      discard_card: IN_PLAY.includes(phase),
      resolve_dispute: open.length > 0,
    }[button.dataset.supervisor];
    button.disabled = !live || !allowed;
  });

  // An open dispute: who, when, which round.
  const alert = $("dispute-alert");
  if (open.length) {
    $("dispute-text").textContent = open.map((d) => format(
      gettext("station %(station)s disputes round %(round)s (%(time)s): call a supervisor."),
      { station: d.station, round: d.round, time: clockText(new Date(d.at)) },
    )).join(" ");
    alert.hidden = false;
  } else {
    alert.hidden = true;
  }
  tick();
}

// Seat mode: who sits at seat ``b`` now (or "empty"), whether its player left mid-round,
// and whether it is the seat whose turn it is (highlighted, and said).
function seatLine(seating, view, b, li) {
  const line = document.createElement("span");
  line.className = "seated";
  const who = seating.seats[String(b)];
  let text = who || gettext("empty");
  const played = view?.seats ? view.seats[String(b)] : null;
  if (played && seating.left.includes(played)) {
    text = format(gettext("%(station)s left: the table plays the seat"), { station: played });
  }
  if (seating.turn && seating.turn.box === b) {
    li.classList.add("turn");
    li.setAttribute("aria-current", "true");
    text += ` · ${gettext("their turn")}`;
  }
  line.textContent = text;
  return line;
}

// The name of a place in the deal ("box:3", "dealer_up", "hole").
function dealPlace(place) {
  if (place === "dealer_up") return gettext("dealer");
  if (place === "hole") return gettext("hole");
  return format(gettext("seat %(seat)s"), { seat: place.split(":")[1] });
}

// Seat mode: the order the deal goes in, the cards down struck through and the next one
// marked; and whose turn it is.
function renderSeating(seating) {
  const order = $("deal-order");
  order.hidden = !seating?.deal.length;
  order.replaceChildren();
  if (!order.hidden) {
    order.append(`${gettext("Deal:")} `);
    seating.deal.forEach((place, i) => {
      if (i > 0) order.append(", ");
      const span = document.createElement("span");
      span.textContent = dealPlace(place);
      if (i < seating.dealt) span.className = "dealt";
      else if (i === seating.dealt) span.className = "next";
      order.append(span);
    });
  }
  const turn = $("seat-turn");
  const text = seating?.turn
    ? format(gettext("Turn: seat %(seat)s (%(station)s)"), {
      seat: seating.turn.box, station: seating.turn.station,
    })
    : "";
  turn.hidden = !text;
  if (turn.textContent !== text) turn.textContent = text;
}

function setEnabled(id, on) {
  $(id).disabled = !on;
}

function tick() {
  const el = $("timer");
  const deadline = state?.round?.deadline;
  if (!deadline || ["settled", "void"].includes(state.round.phase)) {
    el.textContent = gettext("no timer");
    el.classList.remove("low");
    return;
  }
  const left = Math.max(0, Date.parse(deadline) - (Date.now() + clockOffset));
  const seconds = Math.ceil(left / 1000);
  el.textContent = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
  el.classList.toggle("low", seconds <= 5);
}

setInterval(tick, 250);
// No polling: a station's bet change reaches the tablet as {"type": "changed", "what": "bets"}.
connect();
