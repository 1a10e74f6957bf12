import type { Context, Next, ParameterizedContext } from 'koa';
import type { Admission } from '../domain/admission.ts';
import type { Caller } from '../domain/deps.ts';

/** What the middleware chain learns about a request, in order. */
export interface AppState {
  requestId: string;
  caller?: Caller;
  /** How the caller was admitted: its bucket's windows, this request counted. */
  admission?: Admission;
  /** The route pattern, for metrics (never the raw path, which holds IDs). */
  route?: string;
}

export type AppContext = ParameterizedContext<AppState> & Context;
export type Middleware = (ctx: AppContext, next: Next) => Promise<void>;
