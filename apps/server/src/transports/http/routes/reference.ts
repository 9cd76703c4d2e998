import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { apiReference } from "@scalar/express-api-reference";
import express, { Router } from "express";

/** The API reference's browser bundle (and its chunks), served by this server so the page needs no CDN. */
const browserBundleDir = join(dirname(fileURLToPath(import.meta.resolve("@scalar/api-reference"))), "browser");

export const REFERENCE_SCRIPT_PATH = "/reference/standalone.js";
export const ICON_PATH = "/icon.svg";

/** The service's icon (payment catalog `iconUrl`, page favicon). */
const icon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#0b1020"/><path d="M14 46 32 14l18 32H40l-8-15-8 15z" fill="#5eead4"/><circle cx="32" cy="40" r="4" fill="#f472b6"/></svg>`;

/** `/`: an interactive API reference rendered in the browser from `/openapi.json`. */
export function referenceRoutes(): Router {
  const router = Router();
  router.get(ICON_PATH, (_req, res) => {
    res.type("image/svg+xml").set("Cache-Control", "public, max-age=86400").send(icon);
  });
  // Browsers ask for /favicon.ico whatever the page says; answer with the same icon.
  router.get("/favicon.ico", (_req, res) => {
    res.redirect(301, ICON_PATH);
  });
  router.use("/reference", express.static(browserBundleDir, { maxAge: "1d", index: false, fallthrough: true }));
  router.get(
    "/",
    apiReference({
      url: "/openapi.json",
      cdn: REFERENCE_SCRIPT_PATH,
      pageTitle: "Agent Tools API",
      favicon: ICON_PATH,
      withDefaultFonts: false,
      hideClientButton: true,
      telemetry: false,
      defaultOpenAllTags: true,
      showDeveloperTools: "never",
      mcp: { disabled: true },
      // Every feature that would send the document or the reader's questions to Scalar's servers is off: the AI
      // agent ("Ask AI", shown by default on local addresses), the MCP and client buttons, the developer tools,
      // telemetry and the default web fonts; the footer's link to scalar.com is hidden.
      agent: { disabled: true },
      customCss: '.darklight-reference a[href^="https://www.scalar.com"]{display:none}',
    }),
  );
  return router;
}
