import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queues } from "@trendgate/queues";

export const QUEUE_DASHBOARD_PATH = "/admin/queues";

/** Bull Board over every queue, for operators (mounted behind the admin credential). */
export function queueDashboard(queues: Queues) {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({ queues: queues.all().map((q) => new BullMQAdapter(q)), serverAdapter: adapter, options: { uiConfig: { boardTitle: "Trendgate queues" } } });
  return adapter.getRouter();
}
