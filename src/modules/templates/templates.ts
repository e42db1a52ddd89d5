import { z } from 'zod';
import { isRecordNotFound } from '../../db/prisma-errors.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { newestFirst, type PageRequest } from '../../lib/pagination.js';
import { issue, parseInput } from '../../lib/validation.js';
import { MAX_MESSAGE_CHARACTERS } from '../messages/message-text.js';
import { hasStrayDoubleBraces } from './render-template.js';

/** Lengths in characters as people count them (an emoji is one), like a message's text. */
function characters(what: string, min: number, max: number) {
  return (
    z
      .string()
      .superRefine((text, context) => {
        const count = [...text].length;
        const message = `The ${what} must be ${min} to ${max} characters`;
        if (count < min) context.addIssue({ code: 'custom', ...issue('too_short'), message });
        if (count > max) context.addIssue({ code: 'custom', ...issue('too_long'), message });
      })
      // JSON Schema counts a string's length in code points, as this rule does.
      .meta({ minLength: min, maxLength: max })
  );
}

const templateName = characters('name', 3, 80);
const templateContent = characters('content', 1, MAX_MESSAGE_CHARACTERS).refine(
  (content) => !hasStrayDoubleBraces(content),
  {
    ...issue('invalid_format'),
    message: 'The content has unbalanced {{ }} braces',
  },
);

export const createTemplateInput = z
  .strictObject({
    name: templateName.meta({ description: 'Its name, unique in the account' }),
    content: templateContent.meta({ description: 'The text; placeholders are written {{name}}' }),
  })
  .meta({ description: 'A new template' });
export const updateTemplateInput = z
  .strictObject({
    name: templateName.meta({ description: 'A new name; unchanged when left out' }).optional(),
    content: templateContent.meta({ description: 'The new text; placeholders are written {{name}}' }),
  })
  .meta({ description: "A template's new text, and name if given" });

export interface DeletedTemplate {
  id: string;
  deleted: true;
}

type TemplateQuery = Omit<Prisma.TemplateFindUniqueArgs, 'where'>;

export class Templates {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
  ) {}

  async create(accountId: string, input: unknown, query: TemplateQuery = {}) {
    const data = parseInput(createTemplateInput, input);
    const now = this.clock.now();
    return this.prisma.template.create({
      ...query,
      data: { id: newId('tpl'), accountId, ...data, createdAt: now, updatedAt: now },
    });
  }

  async get(accountId: string, id: string, query: TemplateQuery = {}) {
    const template = await this.prisma.template.findFirst({ ...query, where: { id, accountId } });
    if (!template) throw new NotFoundError('Template');
    return template;
  }

  async update(accountId: string, id: string, input: unknown, query: TemplateQuery = {}) {
    const data = parseInput(updateTemplateInput, input);
    try {
      return await this.prisma.template.update({
        ...query,
        where: { id, accountId },
        data: { ...data, updatedAt: this.clock.now() },
      });
    } catch (error) {
      if (isRecordNotFound(error)) throw new NotFoundError('Template');
      throw error;
    }
  }

  list(accountId: string, page: PageRequest, query: TemplateQuery = {}) {
    return this.prisma.template.findMany({
      ...query,
      ...newestFirst({ accountId }, page),
    });
  }

  count(accountId: string): Promise<number> {
    return this.prisma.template.count({ where: { accountId } });
  }

  /**
   * Refused while a campaign that is not deleted uses the template. Deleted campaigns keep
   * their row (their messages link to it), so their reference is dropped here instead.
   */
  async delete(accountId: string, id: string): Promise<DeletedTemplate> {
    await this.prisma.$transaction(async (tx) => {
      // The row lock waits for campaigns being linked to the template right now and keeps new
      // links out until the delete commits, so the count below cannot miss one.
      const locked = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM templates WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`;
      if (locked.length === 0) throw new NotFoundError('Template');
      const inUse = await tx.campaign.count({ where: { templateId: id, deletedAt: null } });
      if (inUse > 0) {
        throw new ConflictError(
          `The template is used by ${inUse === 1 ? 'a campaign' : `${inUse} campaigns`}; change or delete ${inUse === 1 ? 'it' : 'them'} first`,
        );
      }
      await tx.campaign.updateMany({ where: { templateId: id }, data: { templateId: null } });
      await tx.template.delete({ where: { id } });
    });
    return { id, deleted: true };
  }
}
