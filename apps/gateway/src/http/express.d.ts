import type { AuthContext } from "./route.ts";

declare global {
  namespace Express {
    interface Request {
      auth?: AuthContext;
      rawBody?: Buffer;
    }
  }
}
export {};
