import fc from "fast-check";

/**
 * Text with what a CSV line must take care of: commas, quotes, line breaks, a formula's first character; and any
 * grapheme but NUL, which no text column of Postgres holds.
 */
export const csvText = fc.oneof(
  fc.string({ unit: fc.constantFrom("a", "Z", "0", " ", ",", '"', "\r", "\n", "\t", "=", "+", "-", "@", "é", "'") }),
  fc.string({ unit: "grapheme" }).filter((text) => !text.includes("\0")),
);
