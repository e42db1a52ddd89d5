import { Prisma } from '../generated/prisma/client.js';

/**
 * Ends an EXISTS subquery that must stay a per-row index probe. Without it PostgreSQL may turn
 * the subquery into an anti-join, and when its statistics say the inner side is a row or two (a
 * new campaign in a table of single sends, whose campaign_id is almost always null; an account's
 * opt-outs before ANALYZE) it materialises the inner rows and compares each outer row with all
 * of them: quadratic, 8 s instead of 18 ms for a batch of 1,000 out of 20,000 contacts. An
 * OFFSET keeps the subquery from being pulled up (PostgreSQL's documented optimisation fence).
 */
export const perRowProbe = Prisma.raw('OFFSET 0');
