import type pg from "pg";

// Writes every trend row a pass changed in one statement (a pass used to update them one by one).

export interface TrendRowWrite {
  id: string;
  accountId: string;
  topicId: string;
  name: string;
  category: string;
  status: string;
  severity: string;
  stage: string;
  velocity: number;
  acceleration: number;
  baseline: number;
  current: number;
  anomalyScore: number;
  peakVelocity: number;
  publishedVelocity: number;
  pendingSeverity: string | null;
  pendingSince: Date | null;
  velocityEventAt: Date | null;
  sentiment: number | null;
  /** The instant of detection. */
  detectedAt: Date;
  bucketStart: Date;
  /** Elapsed fraction of bucketStart's bucket when assessed (1: closed). */
  observed: number;
  lastAnomalousBucket: Date | null;
  waveStart: Date | null;
  peakSeverity: string | null;
  wavePeakExcess: number | null;
  priorWavePeakExcess: number | null;
  /** The calm closed bucket that announced trend.cooling for the current wave. */
  coolingSince: Date | null;
  /** The last pass that found the trend anomalous (trigger windows). */
  lastAnomalousAt: Date | null;
  /** When it last ended; kept when it is detected again (recovery windows). */
  endedAt: Date | null;
}

const TEXT = ["id", "accountId", "topicId", "name", "category", "status", "severity", "stage"] as const;
const FLOAT = ["velocity", "acceleration", "baseline", "current", "anomalyScore", "peakVelocity", "publishedVelocity", "observed"] as const;

/** Upserts the rows (one per topic). Timestamps travel as ISO strings and are stored as UTC, whatever the session's time zone. */
export async function writeTrendRows(client: pg.PoolClient, rows: TrendRowWrite[]) {
  if (!rows.length) return;
  const utc = (d: Date | null) => d?.toISOString() ?? null;
  await client.query(
    `INSERT INTO trends (id, account_id, topic_id, name, category, status, severity, stage, velocity, acceleration, baseline, current,
                         anomaly_score, peak_velocity, published_velocity, pending_severity, pending_since, velocity_event_at, sentiment,
                         observed, detected_at, bucket_start, last_anomalous_bucket, wave_start, peak_severity, last_anomalous_at, ended_at, wave_peak_excess, prior_wave_peak_excess, cooling_since, updated_at)
     SELECT u.id, u.account_id, u.topic_id, u.name, u.category, u.status, u.severity, u.stage, u.velocity, u.acceleration, u.baseline, u.current,
            u.anomaly_score, u.peak_velocity, u.published_velocity, u.pending_severity, u.pending_since::timestamptz AT TIME ZONE 'UTC',
            u.velocity_event_at::timestamptz AT TIME ZONE 'UTC', u.sentiment, u.observed, u.detected_at::timestamptz AT TIME ZONE 'UTC',
            u.bucket_start::timestamptz AT TIME ZONE 'UTC', u.last_anomalous_bucket::timestamptz AT TIME ZONE 'UTC',
            u.wave_start::timestamptz AT TIME ZONE 'UTC', u.peak_severity, u.last_anomalous_at::timestamptz AT TIME ZONE 'UTC',
            u.ended_at::timestamptz AT TIME ZONE 'UTC', u.wave_peak_excess, u.prior_wave_peak_excess, u.cooling_since::timestamptz AT TIME ZONE 'UTC',
            now() AT TIME ZONE 'UTC'
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::float8[], $10::float8[],
                   $11::float8[], $12::float8[], $13::float8[], $14::float8[], $15::float8[], $16::float8[], $17::text[], $18::text[], $19::text[],
                   $20::float8[], $21::text[], $22::text[], $23::text[], $24::text[], $25::text[], $26::text[], $27::text[], $28::float8[], $29::float8[], $30::text[])
         AS u(id, account_id, topic_id, name, category, status, severity, stage, velocity, acceleration, baseline, current, anomaly_score,
              peak_velocity, published_velocity, observed, pending_severity, pending_since, velocity_event_at, sentiment, detected_at, bucket_start,
              last_anomalous_bucket, wave_start, peak_severity, last_anomalous_at, ended_at, wave_peak_excess, prior_wave_peak_excess, cooling_since)
     ON CONFLICT (topic_id) DO UPDATE SET
       name = excluded.name, category = excluded.category, status = excluded.status, severity = excluded.severity, stage = excluded.stage,
       velocity = excluded.velocity, acceleration = excluded.acceleration, baseline = excluded.baseline, current = excluded.current,
       anomaly_score = excluded.anomaly_score, peak_velocity = excluded.peak_velocity, published_velocity = excluded.published_velocity,
       pending_severity = excluded.pending_severity, pending_since = excluded.pending_since, velocity_event_at = excluded.velocity_event_at,
       sentiment = excluded.sentiment, observed = excluded.observed, detected_at = excluded.detected_at, bucket_start = excluded.bucket_start,
       last_anomalous_bucket = excluded.last_anomalous_bucket, wave_start = excluded.wave_start,
       peak_severity = excluded.peak_severity, last_anomalous_at = excluded.last_anomalous_at, ended_at = excluded.ended_at,
       wave_peak_excess = excluded.wave_peak_excess, prior_wave_peak_excess = excluded.prior_wave_peak_excess, cooling_since = excluded.cooling_since, updated_at = excluded.updated_at`,
    [
      ...TEXT.map((k) => rows.map((r) => r[k])),
      ...FLOAT.map((k) => rows.map((r) => r[k])),
      rows.map((r) => r.pendingSeverity), rows.map((r) => utc(r.pendingSince)), rows.map((r) => utc(r.velocityEventAt)),
      rows.map((r) => r.sentiment), rows.map((r) => utc(r.detectedAt)), rows.map((r) => utc(r.bucketStart)), rows.map((r) => utc(r.lastAnomalousBucket)),
      rows.map((r) => utc(r.waveStart)), rows.map((r) => r.peakSeverity), rows.map((r) => utc(r.lastAnomalousAt)), rows.map((r) => utc(r.endedAt)),
      rows.map((r) => r.wavePeakExcess), rows.map((r) => r.priorWavePeakExcess), rows.map((r) => utc(r.coolingSince)),
    ],
  );
}
