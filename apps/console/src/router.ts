import { useEffect, useState } from "preact/hooks";

// Hash routes: `#/`, `#/webhooks`, `#/webhooks/<id>`, ... The path is the part after `#`, split on `/`.

export interface Route { path: string; parts: string[] }

export function currentRoute(): Route {
  const raw = location.hash.replace(/^#/, "").split("?")[0] || "/";
  const path = raw.startsWith("/") ? raw : `/${raw}`;
  return { path, parts: path.split("/").filter(Boolean).map((p) => { try { return decodeURIComponent(p); } catch { return p; } }) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const on = () => setRoute(currentRoute());
    addEventListener("hashchange", on);
    on(); // the hash may have changed before this effect ran (the link's #token= is replaced at start-up)
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join("/")}`;

export function navigate(to: string) {
  if (location.hash === to) dispatchEvent(new HashChangeEvent("hashchange"));
  else location.hash = to;
}
