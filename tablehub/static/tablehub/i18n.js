/*
 * The pages' words in their language (issue 19, point 6): Django's JavaScript catalog
 * (/jsi18n/<language>/, a classic script each page loads before its modules) defines
 * gettext and interpolate; this module hands them to the station's and the tablet's modules,
 * and formats amounts and times for the page's language (the <html lang> Django set). Without
 * the catalog the words stay English.
 */

const catalog = globalThis.django;

// The page's language, as Django chose it (the station's setting or the browser's).
export const LANGUAGE = document.documentElement.lang || "en";

export function gettext(text) {
  return catalog ? catalog.gettext(text) : text;
}

export function ngettext(one, many, count) {
  if (catalog) return catalog.ngettext(one, many, count);
  return count === 1 ? one : many;
}

// Translated words with their %(name)s fields filled in: format(gettext("..."), {name}).
export function format(text, fields) {
  if (catalog) return catalog.interpolate(text, fields, true);
  return text.replace(/%\((\w+)\)s/g, (_, name) => String(fields[name]));
}

// Amounts in the table's currency as the page's language writes them ("$1,234.50",
// "1234,50 US$"); whole: no cents (chips). An unknown currency code: two decimals, no symbol.
export function moneyFormat(currency, whole) {
  const digits = whole ? { minimumFractionDigits: 0, maximumFractionDigits: 0 } : {};
  try {
    return new Intl.NumberFormat(LANGUAGE, { style: "currency", currency: currency, ...digits });
  } catch {
    return whole
      ? null
      : new Intl.NumberFormat(LANGUAGE, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }
}

// A time of day as the page's language writes it.
export function clockText(date) {
  return date.toLocaleTimeString(LANGUAGE);
}
