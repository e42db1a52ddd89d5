import { NotFoundError, ValidationError } from '../../errors.js';
import type { RowError } from '../../modules/imports/contact-rows.js';
import { IMPORT_STATUS_MEANINGS } from '../../modules/imports/import-job-transitions.js';
import {
  FILE_FORMATS,
  type FileFormat,
  IMPORT_MAX_ROW_ERRORS,
  importInput as importContactsInput,
} from '../../modules/imports/import-options.js';
import type { Builder } from '../builder.js';
import { inputTypeFromZod } from '../zod-input.js';
import { idArg, inputArg, meaningsAsValues } from './args.js';
import type { CommonTypeRefs } from './common.js';

export function addImportTypes(builder: Builder, common: CommonTypeRefs) {
  const importStatus = builder.enumType('ImportStatus', {
    description: 'processing (accepted, or being read) → completed or failed',
    values: meaningsAsValues(IMPORT_STATUS_MEANINGS),
  });

  const formatDescriptions: Record<FileFormat, string> = {
    csv: 'Comma- (or ;, |, tab-) separated text',
    xlsx: 'An Excel workbook; its first sheet is read',
  };
  const fileFormat = builder.enumType('ImportFileFormat', {
    description: 'The kinds of file an import reads',
    values: Object.fromEntries(
      FILE_FORMATS.map((format) => [format, { description: formatDescriptions[format] }]),
    ) as Record<FileFormat, { description: string }>,
  });

  const rowError = builder.objectRef<RowError>('ImportRowError').implement({
    description:
      'A field of a row that was skipped; `row` is the row number a spreadsheet shows (the header is row 1)',
    fields: (t) => ({
      row: t.exposeInt('row', { description: 'The row number a spreadsheet shows' }),
      field: t.exposeString('field', {
        description: 'The contact field: phone, name, email, document, tags or timezone',
      }),
      issue: t.expose('issue', {
        type: common.issueCode,
        description: 'What is wrong, as in a ValidationError detail',
      }),
    }),
  });

  const failure = builder.objectRef<{ code: string; message: string }>('ImportFailure').implement({
    description:
      'Why a whole file was refused: too_many_rows, unreadable_file, missing_column, row_too_large (its message names the row), or internal_error',
    fields: (t) => ({
      code: t.exposeString('code', { description: 'One of the codes above' }),
      message: t.exposeString('message', { description: 'For people' }),
    }),
  });

  builder.prismaObject('ImportJob', {
    description: 'An uploaded file of contacts and how its import went',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      campaignId: t.exposeID('campaignId', { description: 'The campaign the contacts go to' }),
      status: t.expose('status', { type: importStatus, description: 'Where the import is' }),
      receivedFile: t.exposeString('receivedFile', { description: 'The name of the uploaded file' }),
      fileFormat: t.field({
        type: fileFormat,
        description: 'How the file was read',
        select: { fileFormat: true },
        resolve: (job) => job.fileFormat as FileFormat,
      }),
      processed: t.exposeInt('processed', {
        description: 'Data rows read so far; moves while the job is processing',
      }),
      totalRows: t.exposeInt('totalRows', {
        description: 'Data rows of the file (not the header, not empty rows), once completed',
      }),
      imported: t.exposeInt('imported', { description: 'Rows added to the campaign as contacts' }),
      duplicates: t.exposeInt('duplicates', {
        description: 'Rows whose phone was already in the campaign or earlier in the file',
      }),
      invalid: t.exposeInt('invalid', { description: 'Rows skipped for a bad field (see `errors`)' }),
      errors: t.field({
        type: [rowError],
        description: 'The first 100 problems of the invalid rows',
        complexity: { field: IMPORT_MAX_ROW_ERRORS, multiplier: IMPORT_MAX_ROW_ERRORS },
        select: { rowErrors: true },
        resolve: (job) => job.rowErrors as unknown as RowError[],
      }),
      error: t.field({
        type: failure,
        nullable: true,
        description: 'Why the whole file was refused; null unless `failed`',
        select: { errorCode: true, errorMessage: true },
        resolve: (job) => (job.errorCode ? { code: job.errorCode, message: job.errorMessage ?? '' } : null),
      }),
      createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created' }),
      finishedAt: t.expose('finishedAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When it completed or failed',
      }),
    }),
  });

  const importInput = inputTypeFromZod(builder, 'ImportContactsInput', importContactsInput, {
    fileFormat,
  });

  builder.mutationField('importContacts', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'ImportJob',
      description:
        'Upload a CSV or XLSX of contacts (at most 10 MB, 100,000 rows); they are imported by a job',
      errors: { types: [ValidationError, NotFoundError] },
      args: {
        campaign: t.arg.id({ required: true, description: 'The campaign it belongs to' }),
        file: t.arg({
          type: 'Upload',
          required: true,
          description: 'The file, as a part of a multipart request (graphql-multipart-request-spec)',
        }),
        input: inputArg(t.arg, importInput),
      },
      resolve: (query, _root, args, { accountId, services }) =>
        services.contactImports.start(accountId, args.campaign, args.file, args.input, query),
    }),
  );

  builder.queryField('importJob', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'ImportJob',
      description: 'One import of a campaign: poll it to follow the progress',
      errors: { types: [NotFoundError] },
      args: {
        campaign: t.arg.id({ required: true, description: 'The campaign it belongs to' }),
        id: idArg(t.arg),
      },
      resolve: (query, _root, args, { accountId, services }) =>
        services.contactImports.get(accountId, args.campaign, args.id, query),
    }),
  );
}
