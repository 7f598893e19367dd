/*
 * The dealer's words for every error code of the croupier tablet's socket and of the card
 * reader (docs/croupier.md and docs/protocol.md, "Error codes"): what the tablet shows, with
 * the code beside it for the floor's support. tests/test_page_words.py checks that
 * every code has its words here. An ES module imported by tablet.js.
 */

import { format, gettext } from "../tablehub/i18n.js";

export const DEALER_ERRORS = {
  bad_json: gettext("The tablet sent something the server could not read: reload the page."),
  bad_message: gettext("The tablet sent something the server could not read: reload the page."),
  rate_limited: gettext("Too many presses at once: wait a moment and press again."),
  unknown_type: gettext("The server does not know that command: reload the page."),
  missing_field: gettext("Something is missing: fill in every field of the form."),
  supervisor_required: gettext("A supervisor's login is needed: the username or password is wrong."),
  no_round: gettext("No round is open: open the table first."),
  round_halted: gettext("The round is halted by a dispute: call a supervisor to resolve it."),
  no_dispute: gettext("There is no open dispute on this round."),
  no_card_yet: gettext("No card of this round has been dealt yet."),
  no_such_card: gettext("That card is not in this round."),
  invalid: gettext("That is not possible here:"),
  correction_refused: gettext("That correction cannot be made:"),
  dispute_window_closed: gettext("The round's result is final: its dispute time is over."),
  bets_closed: gettext("Bets are already closed."),
  no_bets: gettext("No station has bet yet: bets stay open."),
  round_in_play: gettext("A round is being dealt: finish it (or void it) first."),
  already_void: gettext("This round is already void."),
  round_over: gettext("The round is over."),
  unreadable_card: gettext("The reader could not read that card: enter it by hand."),
  card_not_expected: gettext("No card is wanted now: hold the card and ask the floor."),
  impossible_card: gettext("That card cannot be in this shoe: check the card and the shoe."),
  card_count_exceeded: gettext("Too many of that card for this shoe: check it. A supervisor is alerted."),
  install_unverified: gettext("The program check has not passed: the table cannot open yet."),
  sequence_gap: gettext("The reader skipped cards: check the shoe, then enter the missing cards."),
  server_error: gettext("The server had a problem: try again, and tell the floor if it repeats."),
};

// Codes whose words need the server's reason after them (which rule, which card).
const WITH_REASON = new Set(["invalid", "correction_refused", "missing_field"]);

// The dealer's words for a refusal ({code, message}), with its code.
export function dealerError(error) {
  const code = error?.code || "error";
  let words = DEALER_ERRORS[code] || error?.message || gettext("Refused.");
  if (WITH_REASON.has(code) && error?.message) words += ` ${error.message}`;
  return `${words} [${code}]`;
}

// The dealer's next action and each card's place, in the tablet's language: the state's
// `awaiting` and a card's `label` are the protocol's English (docs/croupier.md, "State");
// what this module does not know is shown as it came.
const PROMPTS = {
  "open bets": gettext("open bets"),
  "close bets": gettext("close bets"),
  "dispute: wait for a supervisor": gettext("dispute: wait for a supervisor"),
  "pay and clear": gettext("pay and clear"),
  "wait for the stations": gettext("wait for the stations"),
  "reveal hole card, dealer draws": gettext("reveal hole card, dealer draws"),
  "deal the dealer's up card": gettext("deal the dealer's up card"),
  "deal the hole card": gettext("deal the hole card"),
  "draw a card": gettext("draw a card"),
  "dealer draws": gettext("dealer draws"),
};
const LABELS = {
  burn: gettext("burn"),
  "hole (face down)": gettext("hole (face down)"),
  "hole (shown)": gettext("hole (shown)"),
  "taken out of play": gettext("taken out of play"),
  "dealer up": gettext("dealer up"),
  dealer: gettext("dealer"),
};

// At a seat-mode table (``seats`` true) a box is a seat, and the tablet says so.
export function promptWords(awaiting, seats) {
  if (PROMPTS[awaiting]) return PROMPTS[awaiting];
  const box = /^deal box (\d+)$/.exec(awaiting || "");
  if (box && seats) return format(gettext("deal seat %(seat)s"), { seat: box[1] });
  return box ? format(gettext("deal box %(box)s"), { box: box[1] }) : awaiting;
}

export function cardLabel(label, seats) {
  if (LABELS[label]) return LABELS[label];
  const box = /^box (\d+)$/.exec(label || "");
  if (box && seats) return format(gettext("seat %(seat)s"), { seat: box[1] });
  if (box) return format(gettext("box %(box)s"), { box: box[1] });
  const hands = /^hands: box (.+)$/.exec(label || "");
  return hands ? format(gettext("hands: box %(boxes)s"), { boxes: hands[1] }) : label;
}
