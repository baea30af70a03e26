import { useEffect, useRef } from "preact/hooks";
import { CopyButton } from "./CopyButton.tsx";
import { Time } from "./Time.tsx";

/** A signing secret shown once, with a Copy button and how to verify deliveries with it. */
export function SecretPanel({ secret, webhookId, previousExpiresAt, onDone, title = "Signing secret", linkToSubscription = true }: {
  secret: string; webhookId: string; previousExpiresAt?: string | null; onDone: () => void; title?: string; linkToSubscription?: boolean;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Shown after a form or a button: move focus (and the view) to it, so it is not missed.
  useEffect(() => { heading.current?.focus(); heading.current?.scrollIntoView({ block: "start" }); }, [secret]);
  const snippet = [
    `// npm i standardwebhooks`,
    `import { Webhook } from "standardwebhooks";`,
    ``,
    `const wh = new Webhook(process.env.TRENDGATE_WEBHOOK_SECRET); // "whsec_…"`,
    ``,
    `// In your handler, with the raw request body (a string or Buffer) and its headers:`,
    `const payload = wh.verify(rawBody, req.headers); // throws if the signature is wrong or too old`,
  ].join("\n");
  return (
    <section class="panel panel-secret" aria-labelledby="secret-title">
      <h2 id="secret-title" ref={heading} tabIndex={-1}>{title}</h2>
      <p><strong>Shown only this once.</strong> Copy it now and keep it where your receiver can read it.</p>
      <div class="secret-row">
        <code class="secret" id="webhook-secret">{secret}</code>
        <CopyButton text={secret} targetId="webhook-secret" />
      </div>
      {previousExpiresAt && <p class="muted">The previous secret keeps signing too until <Time iso={previousExpiresAt} />.</p>}
      <h3>Verify deliveries (Node.js)</h3>
      <pre class="code"><code>{snippet}</code></pre>
      <div class="actions">
        {linkToSubscription && <a class="btn" href={`#/webhooks/${encodeURIComponent(webhookId)}`}>Go to the subscription</a>}
        <button type="button" class="btn btn-quiet" onClick={onDone}>I have stored it</button>
      </div>
    </section>
  );
}
