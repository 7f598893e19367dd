/*
 * A player's words for every error code of the station protocol (docs/protocol.md, "Error
 * codes"): what the station shows instead of the server's message, which is written for
 * developers and logs. tests/test_page_words.py checks that every code of the
 * protocol has its words here. An ES module imported by station.js.
 */

import { format, gettext } from "../tablehub/i18n.js";

export const PLAYER_ERRORS = {
  bad_json: gettext("The station sent something the table could not read. Please try again."),
  bad_message: gettext("The station sent something the table could not read. Please try again."),
  rate_limited: gettext("Too many presses at once: wait a moment and try again."),
  server_error: gettext("The table had a problem with that. Please try again; staff have been told."),
  not_joined: gettext("The station is still connecting. Try again in a moment."),
  unauthorized: gettext("This station is not allowed to play: please call an attendant."),
  too_many_attempts: gettext("Too many wrong credentials: wait a minute, then try again."),
  in_progress: gettext("Still working on your last press."),
  bets_closed: gettext("Bets are closed for this round: your bet was not placed."),
  bad_amount: gettext("That amount cannot be used: enter a positive amount with at most two decimals."),
  below_minimum: gettext("That bet is below the table's minimum."),
  above_maximum: gettext("That bet is above the table's maximum."),
  insufficient_credits: gettext("Not enough credits for that."),
  amount_too_large: gettext("That is more than one cash-in may bring: please use a smaller amount."),
  balance_limit: gettext("That would take your credits above what a station may hold."),
  tips_not_allowed: gettext("Tips to the dealer are not possible at this table."),
  invalid: gettext("That is not possible at this table."),
  unknown_bet: gettext("That bet is not part of this game."),
  special_not_offered: gettext("This table does not offer that bet."),
  too_many_special_bets: gettext("No more special bets fit on this box."),
  special_needs_main: gettext("Place a main bet on this box first."),
  needs_main_bet: gettext("This bet needs a main bet on the same box."),
  top_needs_twenty_one_plus_three: gettext("Top 21+3 needs a 21+3 bet on the same box."),
  bust_above_main: gettext("The bust bet may not be above your main bets."),
  special_above_main: gettext("A special bet may not be above the main bet of its box."),
  no_bets: gettext("There is nothing to repeat or double."),
  not_your_turn: gettext("It is not your turn."),
  too_late: gettext("Too late: the time was up, and the table's rule answered for you."),
  not_allowed: gettext("That move is not allowed for this hand now."),
  unknown_action: gettext("That is not a move of the game."),
  wrong_hand: gettext("That answer was for another hand."),
  bets_on_table: gettext("You can cash out once your bets are settled."),
  round_over: gettext("This round is over."),
  round_halted: gettext("The round is halted while a supervisor reviews a dispute."),
  disputes_not_allowed: gettext("Disputes are not available at this table."),
  no_round: gettext("There is no round of yours to dispute."),
  not_in_round: gettext("You had no bet in that round."),
  no_card_yet: gettext("A round can be disputed from its first card."),
  already_halted: gettext("This round is already being reviewed."),
  dispute_window_closed: gettext("The time to dispute that round is over: its result is final."),
  unreadable_card: gettext("The card reader could not read a card."),
  sequence_gap: gettext("The card reader missed cards: the dealer will check."),
  card_not_expected: gettext("No card is wanted now."),
  impossible_card: gettext("The card reader reported a card that cannot be in the shoe."),
  bad_seed: gettext("Your seed must be 1 to 64 letters, digits or signs, with no space."),
  no_virtual_shoe: gettext("Only a video table's virtual shoe takes a seed from a station."),
  card_count_exceeded: gettext("The dealer is checking a card: please wait."),
  no_session: gettext("Cash in first: limits apply to a session."),
  limit_cool_off: gettext("A limit can only be lowered now: raise or remove it in your next session."),
  loss_limit_reached: gettext("Your loss limit is reached: no new bets in this session."),
  stake_limit_reached: gettext("That would stake more in this round than your limit allows."),
  time_limit_reached: gettext("Your session's time limit is reached: no new bets."),
  no_reality_check: gettext("There is no reality check to answer."),
  reality_check_pending: gettext("Please answer the reality check first."),
  on_break: gettext("This station is on a break: see when it ends on the screen."),
  inactivity_locked: gettext("Betting is paused after inactivity: press I'm here to go on."),
  not_in_stadium: gettext("This station cannot move to that table."),
  same_table: gettext("You are at that table already."),
  table_closed: gettext("That table is closed: choose another one."),
  other_jurisdiction: gettext("That table plays under other rules: your credits cannot move there."),
  other_currency: gettext("That table plays in another currency: your credits cannot move there."),
  name_taken: gettext("A station of the same name plays at that table: please call an attendant."),
  bets_unsettled: gettext("You can move to another table once your bets are settled."),
  not_seat_mode: gettext("This table has no seats: every station plays every box."),
  no_such_seat: gettext("This table has no such seat."),
  already_seated: gettext("You already have a seat: leave it first to take another."),
  seat_taken: gettext("Another player has just taken that seat."),
  not_seated: gettext("You have no seat to leave."),
  seat_has_bets: gettext("Take your bets off your seat before you leave it."),
  round_in_play: gettext("A round is being played: take a seat when its bets are open."),
  empty_seat: gettext("Nobody sits at that seat: take it, or bet behind a seated player."),
  not_allowed_behind: gettext("That bet cannot be placed behind a seat here: only the main bet and the bets the rules allow."),
  behind_cap: gettext("That would take the bets behind this seat above the table's cap."),
  no_seat_bet: gettext("The seated player has no main bet yet: you can bet behind once they have."),
};

// The amounts a refused bet is about, read from the server's message ("... is above the
// table maximum 100", "credits 5.00 do not cover the stakes 10.00"): the player sees why.
const AMOUNTS = {
  above_maximum: [
    /maximum ([0-9.]+)/,
    (m, money) => format(gettext("The maximum is %(amount)s."), { amount: money(m[1]) }),
  ],
  below_minimum: [
    /minimum ([0-9.]+)/,
    (m, money) => format(gettext("The minimum is %(amount)s."), { amount: money(m[1]) }),
  ],
  behind_cap: [
    /above the cap ([0-9.]+)/,
    (m, money) => format(gettext("The cap is %(amount)s."), { amount: money(m[1]) }),
  ],
  insufficient_credits: [
    /credits ([0-9.]+) do not cover the stakes ([0-9.]+)/,
    (m, money) => format(gettext("The bets need %(stakes)s; you have %(credits)s."), {
      stakes: money(m[2]), credits: money(m[1]),
    }),
  ],
};

// The words for a refusal, with its amounts; a code this page does not know keeps the
// server's message. money(amount) formats an amount.
export function playerError(error, money) {
  const code = error?.code;
  const words = PLAYER_ERRORS[code];
  if (!words) return error?.message || gettext("The table refused that.");
  const amounts = AMOUNTS[code];
  const found = amounts && error.message ? error.message.match(amounts[0]) : null;
  return found ? `${words} ${amounts[1](found, money)}` : words;
}
