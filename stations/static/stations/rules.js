/*
 * The table's rules and paytables in a player's words, from the state's `info` (the round's
 * configuration version: docs/protocol.md, "State"), available at any time in the station's
 * "Rules and paytables" panel (GLI-19 §5.2.2). An ES module imported by station.js; it
 * builds the panel's content and nothing else.
 */

import { format, gettext } from "../tablehub/i18n.js";

const DOUBLE_ON = {
  any: gettext("Double on any first two cards"), "9-11": gettext("Double on 9, 10 or 11"),
  "10-11": gettext("Double on 10 or 11"),
};
const LIMIT_NAMES = {
  main: gettext("Main bet"), special: gettext("Each special bet"),
  let_it_play: gettext("Let It Play"),
};
const TIMER_NAMES = {
  betting: gettext("Betting"), insurance: gettext("Insurance"), bonus: gettext("In For 6 pick"),
  decision: gettext("Each decision"),
};

// Each paytable combination's name (spec/special-bets.md), in the page's language.
const COMBINATIONS = {
  suited_trips: gettext("Suited trips"),
  straight_flush: gettext("Straight flush"),
  three_of_a_kind: gettext("Three of a kind"),
  straight: gettext("Straight"),
  flush: gettext("Flush"),
  suited_777: gettext("Suited 777"),
  suited_678: gettext("Suited 678"),
  "777": gettext("777"),
  "678": gettext("678"),
  suited_21: gettext("Suited 21"),
  "21": gettext("21"),
  "20": gettext("20"),
  "19": gettext("19"),
  highest_hearts: gettext("Highest hearts (three A♥)"),
  jacks_in_black: gettext("Jacks in black (three black jacks)"),
  triplets: gettext("Triplets (same rank)"),
  red_carpet: gettext("Red carpet (three red cards)"),
  qh_pair_dealer_bj: gettext("Q♥ pair with a dealer blackjack"),
  qh_pair: gettext("Q♥ pair"),
  matched_20: gettext("Matched 20 (same rank and suit)"),
  diamond_pair: gettext("Diamond pair"),
  any_20: gettext("Any 20"),
  one: gettext("Exactly one"),
  suited_pair: gettext("Suited pair"),
  pair: gettext("Pair"),
  two_suited: gettext("Two suited matches"),
  suited_and_unsuited: gettext("A suited and an unsuited match"),
  one_suited: gettext("One suited match"),
  two_unsuited: gettext("Two unsuited matches"),
  one_unsuited: gettext("One unsuited match"),
  suited_kq: gettext("Suited K Q"),
  suited: gettext("Suited"),
  same_colour: gettext("Same colour"),
  spread_1: gettext("Spread of 1"),
  spread_2: gettext("Spread of 2"),
  spread_3plus: gettext("Spread of 3 or more"),
  suited_77: gettext("Suited 77"),
  "77": gettext("77"),
  first_7: gettext("First card a 7"),
  four_aces: gettext("Four aces"),
  three_suited_aces: gettext("Three suited aces"),
  three_aces: gettext("Three aces"),
  two_suited_aces: gettext("Two suited aces"),
  two_aces: gettext("Two aces"),
  ace_of_diamonds: gettext("Ace of diamonds"),
  one_ace: gettext("One ace"),
  bust_3: gettext("Dealer busts with 3 cards"),
  bust_4: gettext("Dealer busts with 4 cards"),
  bust_5: gettext("Dealer busts with 5 cards"),
  bust_6: gettext("Dealer busts with 6 cards"),
  bust_7: gettext("Dealer busts with 7 cards"),
  bust_8plus: gettext("Dealer busts with 8 or more cards"),
  easy_6: gettext("Easy 6"),
  hard_6_exacta: gettext("Hard 6 of one suit"),
  hard_6_coloured: gettext("Hard 6 of one colour"),
  hard_6_mixed: gettext("Hard 6, mixed colours"),
  sweet_16: gettext("Sweet 16 (A♥ and 5♥)"),
  suited_16: gettext("Suited 16"),
  same_colour_16: gettext("16 of one colour"),
  mixed_colour_16: gettext("16, mixed colours"),
  red: gettext("Red"),
  black: gettext("Black"),
};

function yes(flag, text, otherwise) {
  return flag ? text : otherwise;
}

function holeCardLine(r) {
  if (r.hole_card) {
    return r.peek
      ? gettext("The dealer takes a hole card and checks for blackjack under an ace or a ten.")
      : gettext("The dealer takes a hole card.");
  }
  return r.obo
    ? gettext("No hole card: the dealer's second card comes after the players (only original bets lose to a dealer blackjack).")
    : gettext("No hole card: the dealer's second card comes after the players.");
}

// The game's rules as sentences, from the scenario format's rules object.
export function ruleLines(rules) {
  const r = rules || {};
  const n = (count) => ({ n: count, hands: count + 1 });
  const lines = [
    format(gettext("%(decks)s decks, shuffled for each shoe."), { decks: r.decks }),
    r.dealer_hits_soft_17 ? gettext("The dealer hits soft 17.") : gettext("The dealer stands on all 17s."),
    format(gettext("Blackjack pays %(ratio)s."), { ratio: r.blackjack_pays }),
    holeCardLine(r),
    (DOUBLE_ON[r.double_on] || format(gettext("Double on %(cards)s"), { cards: r.double_on })) +
      yes(r.double_after_split, gettext(", also after a split"), "") +
      yes(r.double_after_hit, gettext(", also after a hit"), "") +
      yes(r.double_for_less, gettext("; you may double for less"), "") + ".",
    r.max_splits
      ? format(gettext("Split up to %(n)s times (%(hands)s hands)"), n(r.max_splits)) +
        yes(r.resplit_aces, gettext("; aces may be split again"), "") +
        yes(r.hit_split_aces, gettext("; split aces may take more cards"), gettext("; split aces take one card each")) +
        yes(r.split_unlike_tens, gettext("; any two ten-value cards may be split"), "") + "."
      : gettext("No splitting."),
    r.late_surrender
      ? r.surrender_after_split
        ? gettext("Late surrender: give up half the stake on your first two cards, also after a split.")
        : gettext("Late surrender: give up half the stake on your first two cards.")
      : gettext("No surrender."),
    r.insurance ? gettext("Insurance is offered against a dealer ace: it costs half the main bet and pays 2 to 1.") : gettext("No insurance."),
    r.even_money ? gettext("Even money is offered to a blackjack against a dealer ace.") : "",
    r.charlie ? format(gettext("%(cards)s-card Charlie: %(cards)s cards without busting win."), { cards: r.charlie }) : "",
    r.timeout_action === "hit_soft"
      ? gettext("When the time runs out, the table hits below hard 12 or soft 17, else stands.")
      : gettext("When the time runs out, the table stands for you."),
    r.special_without_main ? gettext("Special bets may be placed without a main bet.") : gettext("Special bets need a main bet on their box."),
  ];
  return lines.filter(Boolean);
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function words(code) {
  return code.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
}

// Fill `container` with the rules, limits, timers and each special bet's paytable.
// money(amount) formats an amount; betName(code) names a bet.
export function renderRules(container, info, money, betName) {
  container.textContent = "";
  if (!info) return;
  container.append(el("h3", gettext("The game")));
  const rules = el("ul");
  for (const line of ruleLines(info.rules)) rules.append(el("li", line));
  container.append(rules);

  container.append(el("h3", gettext("Limits")));
  const limits = el("ul");
  Object.entries(info.limits || {}).forEach(([kind, [low, high]]) => {
    const name = LIMIT_NAMES[kind] || betName(kind);
    limits.append(el("li", format(gettext("%(bet)s: %(low)s to %(high)s"), {
      bet: name, low: money(low), high: money(high),
    })));
  });
  container.append(limits);

  // GLI-19 §5.2.2: the maximum win, bet by bet (no configuration caps a win: the largest
  // payout of one bet at its maximum, docs/protocol.md "max_win")
  container.append(el("h3", gettext("Maximum win")));
  const wins = el("ul", undefined, "max-win");
  Object.entries(info.max_win || {}).forEach(([kind, amount]) => {
    const name = kind === "main" ? LIMIT_NAMES.main : betName(kind);
    wins.append(el("li", format(gettext("%(bet)s: up to %(amount)s on one bet at the maximum"), {
      bet: name, amount: money(amount),
    })));
  });
  container.append(wins);
  container.append(
    el("p", gettext("The main bet's maximum win counts every split and double the rules allow."), "note")
  );

  container.append(el("h3", gettext("Time to decide")));
  const timers = el("ul");
  Object.entries(info.timers || {}).forEach(([name, seconds]) => {
    timers.append(el("li", format(gettext("%(step)s: %(seconds)s s"), {
      step: TIMER_NAMES[name] || words(name), seconds: seconds,
    })));
  });
  container.append(timers);

  Object.entries(info.paytables || {}).forEach(([code, table]) => {
    container.append(el("h3", format(gettext("%(bet)s pays"), { bet: betName(code) })));
    const rtp = info.rtp?.[code];
    if (rtp) {
      const percent = (Number(rtp) * 100).toFixed(2);
      container.append(el("p", format(gettext("Return to player: %(percent)s %"), {
        percent: Number(percent).toLocaleString(document.documentElement.lang || "en", {
          minimumFractionDigits: 2,
        }),
      }), "note"));
    }
    const list = el("table", undefined, "paytable");
    const body = el("tbody");
    Object.entries(table).forEach(([combination, pays]) => {
      const row = el("tr");
      row.append(el("th", COMBINATIONS[combination] || words(combination)));
      row.append(el("td", Array.isArray(pays)
        ? format(gettext("%(pays)s to 1 (one behind each pick)"), { pays: pays.join(", ") })
        : format(gettext("%(pays)s to 1"), { pays: pays })));
      body.append(row);
    });
    list.append(body);
    container.append(list);
  });
  container.append(el("p", format(gettext("Amounts in %(currency)s."), { currency: info.currency }), "note"));
}
