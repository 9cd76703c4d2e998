type QueryScalar = string | number | boolean | bigint;

/**
 * The query string of a GET request (`?tokenId=3&status=done`, or "" when there is nothing to send): the inverse
 * of `queryToInput`. Scalars are written as text, arrays as repeated parameters; `undefined` and `null` fields are
 * left out. A nested object cannot be a query parameter and throws a `TypeError`.
 */
export function inputToQuery(input: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue;
      if (typeof item === "object" || typeof item === "function" || typeof item === "symbol") {
        throw new TypeError(`${key} cannot be sent as a query parameter: it is not a string, number or boolean`);
      }
      params.append(key, String(item as QueryScalar));
    }
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}
