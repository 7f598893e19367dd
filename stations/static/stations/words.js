/*
 * A player's words for every error code of the station protocol (docs/protocol.md, "Error
 * codes"): what the station shows instead of the server's message, which is written for
 * developers and logs. tests/test_page_words.py checks that every code of the
 * protocol has its words here. An ES module imported by station.js.
 */

export const PLAYER_ERRORS = {
  bad_json: "The station sent something the table could not read. Please try again.",
  bad_message: "The station sent something the table could not read. Please try again.",
  rate_limited: "Too many presses at once: wait a moment and try again.",
  server_error: "The table had a problem with that. Please try again; staff have been told.",
  not_joined: "The station is still connecting. Try again in a moment.",
  unauthorized: "This station is not allowed to play: please call an attendant.",
  too_many_attempts: "Too many wrong credentials: wait a minute, then try again.",
  in_progress: "Still working on your last press.",
  bets_closed: "Bets are closed for this round: your bet was not placed.",
  bad_amount: "That amount cannot be used: enter a positive amount with at most two decimals.",
  below_minimum: "That bet is below the table's minimum.",
  above_maximum: "That bet is above the table's maximum.",
  insufficient_credits: "Not enough credits for that.",
  amount_too_large: "That is more than one cash-in may bring: please use a smaller amount.",
  balance_limit: "That would take your credits above what a station may hold.",
  tips_not_allowed: "Tips to the dealer are not possible at this table.",
  invalid: "That is not possible at this table.",
  unknown_bet: "That bet is not part of this game.",
  special_not_offered: "This table does not offer that bet.",
  too_many_special_bets: "No more special bets fit on this box.",
  special_needs_main: "Place a main bet on this box first.",
  needs_main_bet: "This bet needs a main bet on the same box.",
  top_needs_twenty_one_plus_three: "Top 21+3 needs a 21+3 bet on the same box.",
  bust_above_main: "The bust bet may not be above your main bets.",
  special_above_main: "A special bet may not be above the main bet of its box.",
  no_bets: "There is nothing to repeat or double.",
  not_your_turn: "It is not your turn.",
  too_late: "Too late: the time was up, and the table's rule answered for you.",
  not_allowed: "That move is not allowed for this hand now.",
  unknown_action: "That is not a move of the game.",
  wrong_hand: "That answer was for another hand.",
  bets_on_table: "You can cash out once your bets are settled.",
  round_over: "This round is over.",
  round_halted: "The round is halted while a supervisor reviews a dispute.",
  disputes_not_allowed: "Disputes are not available at this table.",
  no_round: "There is no round of yours to dispute.",
  not_in_round: "You had no bet in that round.",
  no_card_yet: "A round can be disputed from its first card.",
  already_halted: "This round is already being reviewed.",
  dispute_window_closed: "The time to dispute that round is over: its result is final.",
  unreadable_card: "The card reader could not read a card.",
  sequence_gap: "The card reader missed cards: the dealer will check.",
  card_not_expected: "No card is wanted now.",
  impossible_card: "The card reader reported a card that cannot be in the shoe.",
  bad_seed: "Your seed must be 1 to 64 letters, digits or signs, with no space.",
  no_virtual_shoe: "Only a video table's virtual shoe takes a seed from a station.",
  card_count_exceeded: "The dealer is checking a card: please wait.",
  no_session: "Cash in first: limits apply to a session.",
  limit_cool_off: "A limit can only be lowered now: raise or remove it in your next session.",
  loss_limit_reached: "Your loss limit is reached: no new bets in this session.",
  stake_limit_reached: "That would stake more in this round than your limit allows.",
  time_limit_reached: "Your session's time limit is reached: no new bets.",
  no_reality_check: "There is no reality check to answer.",
  reality_check_pending: "Please answer the reality check first.",
  on_break: "This station is on a break: see when it ends on the screen.",
  inactivity_locked: "Betting is paused after inactivity: press I'm here to go on.",
};

// The amounts a refused bet is about, read from the server's message ("... is above the
// table maximum 100", "credits 5.00 do not cover the stakes 10.00"): the player sees why.
const AMOUNTS = {
  above_maximum: [/maximum ([0-9.]+)/, (m, money) => `The maximum is ${money(m[1])}.`],
  below_minimum: [/minimum ([0-9.]+)/, (m, money) => `The minimum is ${money(m[1])}.`],
  insufficient_credits: [
    /credits ([0-9.]+) do not cover the stakes ([0-9.]+)/,
    (m, money) => `The bets need ${money(m[2])}; you have ${money(m[1])}.`,
  ],
};

// The words for a refusal, with its amounts; a code this page does not know keeps the
// server's message. money(amount) formats an amount.
export function playerError(error, money) {
  const code = error?.code;
  const words = PLAYER_ERRORS[code];
  if (!words) return error?.message || "The table refused that.";
  const amounts = AMOUNTS[code];
  const found = amounts && error.message ? error.message.match(amounts[0]) : null;
  return found ? `${words} ${amounts[1](found, money)}` : words;
}
