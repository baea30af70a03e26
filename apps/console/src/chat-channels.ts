import { useRef, useState } from "preact/hooks";
import { asApiError, get, type ApiError } from "./api.ts";
import type { ChatChannelList, ChatProvider } from "./types.ts";

// The chat providers a routing rule may name, as GET /api/integrations/chat/providers lists them (read from the
// connector registry, so no provider is named here), and each one's channels, read from its own `channels` route.

type Channel = ChatChannelList["data"][number];
type Channels = { state: "loading" } | { state: "ok"; data: Channel[] } | { state: "failed"; error: ApiError };

/** Each provider's channels, loaded once when first asked for (up to 1,000); a failure leaves the field free text. */
export function useChannels(providers: ChatProvider[]) {
  const [byProvider, setByProvider] = useState<Record<string, Channels>>({});
  const asked = useRef(new Set<string>());
  const of = (provider: string) => providers.find((p) => p.id === provider);
  const want = (provider: string) => {
    const p = of(provider);
    if (!p || asked.current.has(provider)) return;
    asked.current.add(provider);
    const put = (c: Channels) => setByProvider((s) => ({ ...s, [provider]: c }));
    put({ state: "loading" });
    void (async () => {
      const data: Channel[] = [];
      let cursor: string | null = null;
      try {
        for (let i = 0; i < 5; i++) {
          const page: ChatChannelList = await get<ChatChannelList>(`${p.base_path}/channels`, { limit: 200, cursor });
          data.push(...page.data);
          if (!(cursor = page.next_cursor)) break;
        }
        put({ state: "ok", data });
      } catch (err) {
        put({ state: "failed", error: asApiError(err) });
      }
    })();
  };
  const name = (provider: string, id: string) => {
    const c = byProvider[provider];
    const ch = c?.state === "ok" ? c.data.find((x) => x.id === id) : undefined;
    return ch ? `#${ch.name}` : id;
  };
  return {
    providers, byProvider, want, name,
    /** The provider's display name; a provider this server no longer has shows its id. */
    label: (provider: string) => of(provider)?.display_name ?? provider,
    /** What to type in the channel field when there is no list to choose from. */
    hint: (provider: string) => of(provider)?.channel_id_hint ?? "the channel id",
  };
}
export type ChannelCache = ReturnType<typeof useChannels>;
