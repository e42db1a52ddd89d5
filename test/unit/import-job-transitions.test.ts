import { describe, expect, it } from 'vitest';
import {
  IMPORT_JOB_TRANSITIONS,
  importJobMayMove,
  importJobSourcesOf,
} from '../../src/modules/imports/import-job-transitions.js';

describe('the import job transition table', () => {
  it('ends a job once: nothing leaves completed or failed, nothing goes back to processing', () => {
    expect(IMPORT_JOB_TRANSITIONS.completed).toEqual([]);
    expect(IMPORT_JOB_TRANSITIONS.failed).toEqual([]);
    expect(importJobMayMove('completed', 'failed')).toBe(false);
    expect(importJobMayMove('failed', 'completed')).toBe(false);
    expect(importJobMayMove('completed', 'completed')).toBe(false);
  });

  it('lets a processing job complete or fail, and nothing else', () => {
    expect(importJobMayMove('processing', 'completed')).toBe(true);
    expect(importJobMayMove('processing', 'failed')).toBe(true);
    expect(importJobMayMove(undefined, 'completed')).toBe(false);
    expect(importJobMayMove('cancelled', 'failed')).toBe(false);
  });

  it('gives the statements that move a job the statuses they may move it from', () => {
    expect(importJobSourcesOf('completed')).toEqual(['processing']);
    expect(importJobSourcesOf('failed')).toEqual(['processing']);
  });
});
