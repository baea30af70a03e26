import type { AuthContext } from "./route.ts";

declare global {
  namespace Express {
    interface Request {
      id: string;
      auth?: AuthContext;
      rawBody?: Buffer;
    }
  }
}
export {};
