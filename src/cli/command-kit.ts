import type { ParseArgsConfig } from 'node:util';
import { AppError, NotFoundError } from '../errors.js';
import type { Services } from '../services.js';

// What every group of operator commands shares: the shapes of a command, its output and the account it names.

/** A command line that cannot be understood. */
export class UsageError extends Error {}

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | undefined>;

export interface Command {
  summary: string;
  /** The options as the help shows them, after the command's name. */
  synopsis: string;
  options: Options;
  required: string[];
  details?: string;
  /** The value a single positional argument gives (`carriers add NAME` fills `name`). */
  positional?: string;
  run(services: Services, values: Values): Promise<void>;
}

export interface Group {
  summary: string;
  commands: Record<string, Command>;
}

export function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export async function accountOf(services: Services, values: Values): Promise<string> {
  try {
    return await services.accounts.idByEmail(String(values.email));
  } catch (error) {
    if (error instanceof NotFoundError)
      throw new AppError('not_found', `no account has the e-mail ${String(values.email)}`);
    throw error;
  }
}
