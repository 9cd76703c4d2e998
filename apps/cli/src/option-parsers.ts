// Parsers of flag values: a value they refuse is a usage mistake that commander reports with the flag's name (exit 2).
import { InvalidArgumentError } from "commander";

export const parsePrice = (value: string) => {
  if (!/^\d+(\.\d{1,6})?$/.test(value)) throw new InvalidArgumentError("use a decimal USD amount such as 0.50");
  return value;
};

export const parseHttpUrl = (value: string) => {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {}
  if (!url || !/^https?:$/.test(url.protocol)) throw new InvalidArgumentError("use an http:// or https:// URL");
  return value;
};

export const parseSeconds = (value: string) => {
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 5)
    throw new InvalidArgumentError("use a whole number of seconds, at least 5");
  return seconds;
};

export const parseTokenId = (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("use a token id from 1 to 6666");
  return Number(value);
};

export const parseCount = (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("use a whole number");
  return Number(value);
};

export const parseDay = (value: string) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) throw new InvalidArgumentError("use a UTC day written YYYY-MM-DD");
  return value;
};

/** A repeatable flag: each value added to the list of those before it. */
export const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];
