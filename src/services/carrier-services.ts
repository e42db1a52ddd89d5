import type { CarrierCatalog } from '../carriers/carrier-catalog.js';
import { CarrierCallbacks } from '../carriers/index.js';
import type { CarrierDirectory } from '../carriers/routing/carrier-directory.js';
import type { Dependencies } from '../deps.js';
import type { CarrierReports } from '../modules/messages/carrier-reports.js';

export function callbackReceiver(
  { prisma, clock, config, logger, redis }: Dependencies,
  catalog: CarrierCatalog,
  directory: CarrierDirectory,
  reports: CarrierReports,
): CarrierCallbacks {
  return new CarrierCallbacks({
    prisma,
    clock,
    logger: logger.child({ module: 'carriers' }),
    publicUrl: config.publicUrl,
    knownCarrier: (name) => directory.carrier(name) ?? null,
    readCarrier: (name) => catalog.carrier(name).catch(() => null),
    redis,
    redisPrefix: config.redisPrefix,
    sinkFor: (carrier) => reports.sinkFor(carrier),
  });
}
