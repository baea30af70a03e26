import type { AdAccount, AdsClient } from "@trendgate/connector-ads";

/** No ad account is selected and the connection does not reach exactly one: the caller must choose (`accounts`). */
export class AdAccountChoiceError extends Error {
  constructor(readonly accounts: AdAccount[]) {
    super(accounts.length
      ? `the connection reaches ${accounts.length} ad accounts: choose one (${accounts.map((a) => (a.name ? `${a.id} "${a.name}"` : a.id)).join(", ")})`
      : "the connection reaches no ad account");
  }
}

/**
 * The ad account a selection works on: the one it names, else the only one the connection reaches (read from the
 * provider each time, so an account added later makes the choice explicit again); AdAccountChoiceError otherwise.
 */
export async function resolveAdAccount(client: AdsClient, selected: string | undefined): Promise<string> {
  if (selected) return selected;
  const accounts = await client.listAccounts();
  if (accounts.length === 1) return accounts[0].id;
  throw new AdAccountChoiceError(accounts);
}
