/*
 * The station's notices (docs/protocol.md, "Events"): what the table tells a player that is
 * not a card or a question, in a player's words, with the amounts. An ES module imported by
 * station.js; it draws nothing itself: each function returns the notice to show,
 * { text, kind, keepMs }, kind "news" (blue), "back" (green) or "halted" (red), keepMs how
 * long it stays in the banner (0: until the next one). Every notice also goes into the
 * station's notice list, newest first, so none is missed.
 */

import { clockText, format, gettext } from "../tablehub/i18n.js";

const NOTICE_LIST_SIZE = 6;

// Events that no card or question caused: the page shows them whatever their id.
export const TABLE_NEWS = {
  betting_restarted: true,
  table_status: true,
  shoe_changed: true,
  refunded: true,
};

function clock(iso, clockOffset) {
  return clockText(new Date(Date.parse(iso) - clockOffset));
}

// The notice of a table event; money(amount) formats an amount, roundName(id) names a round.
export function tableNotice(event, money, roundName, clockOffset) {
  switch (event.type) {
    case "betting_restarted":
      return {
        text: format(gettext("Nobody bet in time: bets are open again until %(time)s."), {
          time: clock(event.deadline, clockOffset),
        }),
        kind: "news",
        keepMs: 8000,
      };
    case "table_status":
      return event.open
        ? {
          text: gettext("The table is open: rounds follow each other again."),
          kind: "back",
          keepMs: 6000,
        }
        : {
          text: gettext("The table is closing: no new round after this one. Your credits stay with the station; you may cash out."),
          kind: "halted",
          keepMs: 0,
        };
    case "shoe_changed":
      return {
        text: format(gettext("The dealer started a new shoe (%(decks)s decks, freshly shuffled)."), {
          decks: event.decks,
        }),
        kind: "news",
        keepMs: 8000,
      };
    case "refunded": {
      const amounts = {
        round: roundName(event.round), reason: event.reason, staked: money(event.staked),
        taken_back: money(event.taken_back), refunded: money(event.refunded),
        credits: money(event.credits),
      };
      const text = Number(event.taken_back) > 0
        ? format(gettext("%(round)s was voided (%(reason)s). Your stakes of %(staked)s are given back, less the %(taken_back)s the round had paid you: %(refunded)s returned. Credits now %(credits)s."), amounts)
        : format(gettext("%(round)s was voided (%(reason)s). Your stakes of %(staked)s are given back: %(refunded)s returned. Credits now %(credits)s."), amounts);
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
        text: format(gettext("%(round)s is halted: a dispute waits for the supervisor. No card is dealt and no decision taken until it is resolved."), { round: name }),
        kind: "halted",
        keepMs: 0,
      };
    case "corrected": {
      const positions = event.positions || [];
      const fields = { positions: positions.join(", "), round: name.toLowerCase() };
      const text = positions.length === 1
        ? format(gettext("The supervisor corrected card %(positions)s of %(round)s."), fields)
        : format(gettext("The supervisor corrected cards %(positions)s of %(round)s."), fields);
      return { text: change ? `${text} ${change}` : text, kind: "news", keepMs: 0 };
    }
    case "resumed": {
      const fields = { round: name, time: event.deadline ? clock(event.deadline, clockOffset) : "" };
      let text;
      if (event.resolution === "correct") {
        text = event.deadline
          ? format(gettext("%(round)s goes on with the corrected cards: answer by %(time)s."), fields)
          : format(gettext("%(round)s goes on with the corrected cards."), fields);
      } else {
        text = event.deadline
          ? format(gettext("%(round)s goes on: answer by %(time)s."), fields)
          : format(gettext("%(round)s goes on."), fields);
      }
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
    parts.push(format(gettext("Credits: %(before)s → %(after)s"), {
      before: money(before.credits), after: money(after.credits),
    }));
  }
  return parts.length ? `${parts.join("; ")}.` : gettext("Nothing changed for your bets.");
}

// The receipt of a cash-out reply, in words.
export function receiptNotice(receipt, money, clockOffset) {
  return {
    text: format(gettext("Receipt: %(amount)s paid out to station %(station)s at %(table)s, %(time)s."), {
      amount: money(receipt.amount), station: receipt.station, table: receipt.table,
      time: clock(receipt.at, clockOffset),
    }),
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
  time.textContent = clockText(new Date());
  item.append(time, " ", notice.text);
  list.prepend(item);
  while (list.children.length > NOTICE_LIST_SIZE) list.lastElementChild.remove();
}
