import type { RequestHandler, Response } from "express";

type Timings = [name: string, ms: number][];

/** Adds `ms` under `name` to the call's timings (reported in `Server-Timing` on the answer). */
export function recordTiming(res: Response, name: string, ms: number): void {
  if (!res.locals.timings) res.locals.timings = [];
  (res.locals.timings as Timings).push([name, ms]);
}

/** Measures a step of the paid-call pipeline (until it calls next or answers). */
export function timed(name: string, step: RequestHandler): RequestHandler {
  return async (req, res, next) => {
    const start = performance.now();
    let recorded = false;
    const record = () => {
      if (!recorded) {
        recorded = true;
        recordTiming(res, name, performance.now() - start);
      }
    };
    await step(req, res, (error?: unknown) => {
      record();
      next(error);
    });
    record();
  };
}

/** `Server-Timing: validate;dur=0.12, identify;dur=1.51, ...` */
export function serverTimingHeader(res: Response): string {
  const timings = (res.locals.timings ?? []) as Timings;
  return timings.map(([name, ms]) => `${name};dur=${ms.toFixed(2)}`).join(", ");
}
