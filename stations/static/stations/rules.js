/*
 * The table's rules and paytables in a player's words, from the state's `info` (the round's
 * configuration version: docs/protocol.md, "State"), available at any time in the station's
 * "Rules and paytables" panel (GLI-19 §5.2.2). An ES module imported by station.js; it
 * builds the panel's content and nothing else.
 */

const DOUBLE_ON = { any: "any first two cards", "9-11": "9, 10 or 11", "10-11": "10 or 11" };
const LIMIT_NAMES = { main: "Main bet", special: "Each special bet", let_it_play: "Let It Play" };
const TIMER_NAMES = {
  betting: "Betting", insurance: "Insurance", bonus: "In For 6 pick", decision: "Each decision",
};

function yes(flag, text, otherwise) {
  return flag ? text : otherwise;
}

// The game's rules as sentences, from the scenario format's rules object.
export function ruleLines(rules) {
  const r = rules || {};
  const lines = [
    `${r.decks} decks, shuffled for each shoe.`,
    r.dealer_hits_soft_17 ? "The dealer hits soft 17." : "The dealer stands on all 17s.",
    `Blackjack pays ${r.blackjack_pays}.`,
    r.hole_card
      ? `The dealer takes a hole card${r.peek ? " and checks for blackjack under an ace or a ten" : ""}.`
      : `No hole card: the dealer's second card comes after the players${r.obo ? " (only original bets lose to a dealer blackjack)" : ""}.`,
    `Double on ${DOUBLE_ON[r.double_on] || r.double_on}` +
      yes(r.double_after_split, ", also after a split", "") +
      yes(r.double_after_hit, ", also after a hit", "") +
      yes(r.double_for_less, "; you may double for less", "") + ".",
    r.max_splits
      ? `Split up to ${r.max_splits} times (${r.max_splits + 1} hands)` +
        yes(r.resplit_aces, "; aces may be split again", "") +
        yes(r.hit_split_aces, "; split aces may take more cards", "; split aces take one card each") +
        yes(r.split_unlike_tens, "; any two ten-value cards may be split", "") + "."
      : "No splitting.",
    r.late_surrender
      ? `Late surrender: give up half the stake on your first two cards${r.surrender_after_split ? ", also after a split" : ""}.`
      : "No surrender.",
    r.insurance ? "Insurance is offered against a dealer ace: it costs half the main bet and pays 2 to 1." : "No insurance.",
    r.even_money ? "Even money is offered to a blackjack against a dealer ace." : "",
    r.charlie ? `${r.charlie}-card Charlie: ${r.charlie} cards without busting win.` : "",
    r.timeout_action === "hit_soft"
      ? "When the time runs out, the table hits below hard 12 or soft 17, else stands."
      : "When the time runs out, the table stands for you.",
    r.special_without_main ? "Special bets may be placed without a main bet." : "Special bets need a main bet on their box.",
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
  container.append(el("h3", "The game"));
  const rules = el("ul");
  for (const line of ruleLines(info.rules)) rules.append(el("li", line));
  container.append(rules);

  container.append(el("h3", "Limits"));
  const limits = el("ul");
  Object.entries(info.limits || {}).forEach(([kind, [low, high]]) => {
    const name = LIMIT_NAMES[kind] || betName(kind);
    limits.append(el("li", `${name}: ${money(low)} to ${money(high)}`));
  });
  container.append(limits);

  // GLI-19 §5.2.2: the maximum win, bet by bet (no configuration caps a win: the largest
  // payout of one bet at its maximum, docs/protocol.md "max_win")
  container.append(el("h3", "Maximum win"));
  const wins = el("ul", undefined, "max-win");
  Object.entries(info.max_win || {}).forEach(([kind, amount]) => {
    const name = kind === "main" ? LIMIT_NAMES.main : betName(kind);
    wins.append(el("li", `${name}: up to ${money(amount)} on one bet at the maximum`));
  });
  container.append(wins);
  container.append(
    el("p", "The main bet's maximum win counts every split and double the rules allow.", "note")
  );

  container.append(el("h3", "Time to decide"));
  const timers = el("ul");
  Object.entries(info.timers || {}).forEach(([name, seconds]) => {
    timers.append(el("li", `${TIMER_NAMES[name] || words(name)}: ${seconds} s`));
  });
  container.append(timers);

  Object.entries(info.paytables || {}).forEach(([code, table]) => {
    container.append(el("h3", `${betName(code)} pays`));
    const rtp = info.rtp?.[code];
    if (rtp) {
      const percent = (Number(rtp) * 100).toFixed(2);
      container.append(el("p", `Return to player: ${percent} %`, "note"));
    }
    const list = el("table", undefined, "paytable");
    const body = el("tbody");
    Object.entries(table).forEach(([combination, pays]) => {
      const row = el("tr");
      row.append(el("th", words(combination)));
      row.append(el("td", Array.isArray(pays) ? `${pays.join(", ")} to 1 (one behind each pick)` : `${pays} to 1`));
      body.append(row);
    });
    list.append(body);
    container.append(list);
  });
  container.append(el("p", `Amounts in ${info.currency}.`, "note"));
}
