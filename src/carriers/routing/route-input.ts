import { AppError } from '../../errors.js';
import { CARRIER_NAME } from '../carrier-url.js';

// What `routes add` and `routes update` are given for the carriers of a route, read and checked.

export interface RouteInput {
  /** Names in order, comma-separated: `a,b,c`. */
  carriers?: string;
  /** Weights, comma-separated: `a=70,b=30`. */
  split?: string;
}

function invalid(message: string): AppError {
  return new AppError('validation_error', message);
}

/** `--carriers a,b` or `--split a=70,b=30`, exactly one of them. */
export function parseRouteChoice(input: RouteInput): {
  carriers: string[];
  split: Record<string, number> | null;
} {
  if ((input.carriers === undefined) === (input.split === undefined))
    throw invalid('give either --carriers a,b,… or --split a=70,b=30');
  if (input.carriers !== undefined) {
    const carriers = input.carriers.split(',').map((name) => name.trim());
    if (carriers.some((name) => !CARRIER_NAME.test(name)) || new Set(carriers).size !== carriers.length)
      throw invalid('invalid --carriers: distinct carrier names separated by commas');
    return { carriers, split: null };
  }
  const split: Record<string, number> = {};
  for (const part of input.split!.split(',')) {
    const [name = '', weight = ''] = part.split('=').map((text) => text.trim());
    if (!CARRIER_NAME.test(name) || !/^[1-9][0-9]{0,5}$/.test(weight) || Object.hasOwn(split, name))
      throw invalid('invalid --split: distinct name=weight pairs (weights from 1) separated by commas');
    split[name] = Number(weight);
  }
  return { carriers: Object.keys(split), split };
}
