/*
 * The station's notices (docs/protocol.md, "Events"): what the table tells a player that is
 * not a card or a question, in a player's words, with the amounts. An ES module imported by
 * station.js; it draws nothing itself: each function returns the notice to show,
 * { text, kind, keepMs }, kind "news" (blue), "back" (green) or "halted" (red), keepMs how
 * long it stays in the banner (0: until the next one). Every notice also goes into the
 * station's notice list, newest first, so none is missed.
 */

const NOTICE_LIST_SIZE = 6;

// Events that no card or question caused: the page shows them whatever their id.
export const TABLE_NEWS = {
  betting_restarted: true,
  table_status: true,
  shoe_changed: true,
  refunded: true,
};

function clock(iso, clockOffset) {
  return new Date(Date.parse(iso) - clockOffset).toLocaleTimeString();
}

// The notice of a table event; money(amount) formats an amount, roundName(id) names a round.
export function tableNotice(event, money, roundName, clockOffset) {
  switch (event.type) {
    case "betting_restarted":
      return {
        text: "Nobody bet in time: bets are open again until " +
          clock(event.deadline, clockOffset) + ".",
        kind: "news",
        keepMs: 8000,
      };
    case "table_status":
      return event.open
        ? { text: "The table is open: rounds follow each other again.", kind: "back",
          keepMs: 6000 }
        : { text: "The table is closing: no new round after this one. Your credits stay " +
          "with the station; you may cash out.", kind: "halted", keepMs: 0 };
    case "shoe_changed":
      return {
        text: `The dealer started a new shoe (${event.decks} decks, freshly shuffled).`,
        kind: "news",
        keepMs: 8000,
      };
    case "refunded": {
      let text = `${roundName(event.round)} was voided (${event.reason}). ` +
        `Your stakes of ${money(event.staked)} are given back`;
      if (Number(event.taken_back) > 0) {
        text += `, less the ${money(event.taken_back)} the round had paid you`;
      }
      text += `: ${money(event.refunded)} returned. Credits now ${money(event.credits)}.`;
      return { text: text, kind: "halted", keepMs: 0 };
    }
    default:
      return null;
  }
}

// A dispute's news (docs/protocol.md, "Disputes"): the round halts, a supervisor corrects
// cards (`change`: what the correction changed for this station, from changeText), the round
// goes on (`change`: the correction it goes on with, if any).
export function disputeNotice(event, roundName, clockOffset, change) {
  const name = roundName(event.round);
  switch (event.type) {
    case "halted":
      return {
        text: `${name} is halted: a dispute waits for the supervisor. No card is dealt and ` +
          "no decision taken until it is resolved.",
        kind: "halted",
        keepMs: 0,
      };
    case "corrected": {
      const count = (event.positions || []).length;
      const which = count === 1 ? `card ${event.positions[0]}` :
        `cards ${(event.positions || []).join(", ")}`;
      const text = `The supervisor corrected ${which} of ${name.toLowerCase()}.`;
      return { text: change ? `${text} ${change}` : text, kind: "news", keepMs: 0 };
    }
    case "resumed": {
      let text = `${name} goes on`;
      text += event.resolution === "correct" ? " with the corrected cards" : "";
      text += event.deadline ? `: answer by ${clock(event.deadline, clockOffset)}.` : ".";
      return { text: change ? `${text} ${change}` : text, kind: "back", keepMs: 10000 };
    }
    default:
      return null;
  }
}

// What a correction changed for this station, in words: each hand whose cards, total or
// result changed ("Box 1: 16 → 11"), and its credits ("Credits: $105.00 → $95.00").
// before / after: { credits, hands: { hand id: { name, words } } }, as the page saw them.
export function changeText(before, after, money) {
  const parts = [];
  Object.entries(after.hands).forEach(([id, now]) => {
    const was = before.hands[id];
    if (was && was.words !== now.words) parts.push(`${now.name}: ${was.words} → ${now.words}`);
  });
  if (before.credits !== null && after.credits !== null &&
    Number(before.credits) !== Number(after.credits)) {
    parts.push(`Credits: ${money(before.credits)} → ${money(after.credits)}`);
  }
  return parts.length ? `${parts.join("; ")}.` : "Nothing changed for your bets.";
}

// The receipt of a cash-out reply, in words.
export function receiptNotice(receipt, money, clockOffset) {
  return {
    text: `Receipt: ${money(receipt.amount)} paid out to station ${receipt.station} at ` +
      `${receipt.table}, ${clock(receipt.at, clockOffset)}.`,
    kind: "back",
    keepMs: 0,
  };
}

// Put the notice on the list (newest first, a few kept), with the time it came.
export function listNotice(list, notice) {
  if (!list) return;
  const item = document.createElement("li");
  item.dataset.kind = notice.kind;
  const time = document.createElement("time");
  time.textContent = new Date().toLocaleTimeString();
  item.append(time, " ", notice.text);
  list.prepend(item);
  while (list.children.length > NOTICE_LIST_SIZE) list.lastElementChild.remove();
}
