import express, { type RequestHandler } from "express";

/** Largest request body accepted; larger bodies get 413 before any work is done. */
export const MAX_BODY_BYTES = 32 * 1024;

/** Parses JSON bodies (strict: an object or array at the top) up to 32 KiB. Parse failures reach the error handler. */
export function jsonBody(): RequestHandler {
  return express.json({ limit: MAX_BODY_BYTES, strict: true, type: ["application/json", "application/*+json"] });
}
