import { z } from 'zod';
import { parseInput } from './validation.js';

export const MAX_PER_PAGE = 100;

const pageInput = z.object({
  page: z.number().int().min(1).max(1_000_000).default(1),
  perPage: z.number().int().min(1).max(MAX_PER_PAGE).default(20),
});

export interface PageRequest {
  page: number;
  perPage: number;
}

/** `page` from 1, `per_page` 1..100 (default 20); anything else is a 422 of its own. */
export function parsePage(input: { page?: number | null; perPage?: number | null }): PageRequest {
  return parseInput(pageInput, { page: input.page ?? undefined, perPage: input.perPage ?? undefined });
}

export function pageWindow({ page, perPage }: PageRequest): { skip: number; take: number } {
  return { skip: (page - 1) * perPage, take: perPage };
}

/** A page of a list shown newest first: by creation time, ties by id, so that pages never overlap. */
export function newestFirst(page: PageRequest) {
  return { orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }], ...pageWindow(page) };
}
