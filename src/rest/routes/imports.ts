import { IMPORT_MAX_FILE_BYTES } from '../../modules/imports/import-options.js';
import type { RestRoute } from '../route-table.js';

export const importRoutes: readonly RestRoute[] = [
  {
    method: 'POST',
    path: '/v1/campaigns/:campaign/contacts/import',
    operation: 'ImportContacts',
    params: { campaign: 'campaign' },
    body: 'input',
    upload: { field: 'file', variable: 'file', maxBytes: IMPORT_MAX_FILE_BYTES },
    status: 202,
    summary: 'Import contacts',
    description:
      'Upload a CSV or XLSX of contacts (multipart form, at most 10 MB and 100,000 rows); a job imports it',
  },
  {
    method: 'GET',
    path: '/v1/campaigns/:campaign/contacts/import/:job',
    operation: 'ImportJob',
    params: { campaign: 'campaign', job: 'id' },
    omitNull: ['error'],
    status: 200,
    summary: 'Read an import job',
    description:
      'An import job: its progress while processing, its counts and first errors once completed, its error when failed',
  },
];
