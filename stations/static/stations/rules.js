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
      row.append(el("th", words(combination)));
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
