import { strict as assert } from 'node:assert';
import { JOB_STATUSES, type JobStatus } from '@supply/contracts';
import type { SyncPhase } from './repository';
import { JOB_TRANSITIONS, SYNC_TRANSITIONS, isFinishedStatus, moveJob, moveSync } from './states';

const PHASES: SyncPhase[] = ['validating', 'loading', 'applying', 'deleting', 'done'];

describe('job state machine', () => {
  it('names every status, and only published ones', () => {
    assert.deepEqual(Object.keys(JOB_TRANSITIONS).sort(), [...JOB_STATUSES].sort());
    for (const targets of Object.values(JOB_TRANSITIONS)) for (const to of targets) assert.ok(JOB_STATUSES.includes(to));
  });

  it('starts queued, runs, and finishes; nothing goes back to queued or running', () => {
    const job = { status: 'queued' as JobStatus };
    moveJob(job, 'running');
    moveJob(job, 'partially_succeeded');
    assert.equal(job.status, 'partially_succeeded');
    for (const from of JOB_STATUSES) {
      for (const to of ['queued', 'running'] as const) {
        if (from === to || (from === 'queued' && to === 'running')) continue;
        assert.throws(() => moveJob({ status: from }, to), new RegExp(`from ${from} to ${to}`));
      }
    }
  });

  it('lets a job that never started fail (a stall), but not succeed', () => {
    const job = { status: 'queued' as JobStatus };
    assert.throws(() => moveJob(job, 'succeeded'), /from queued to succeeded/);
    moveJob(job, 'failed');
    assert.equal(job.status, 'failed');
  });

  it('lets a late report correct a finished status to another finished one', () => {
    for (const from of JOB_STATUSES.filter(isFinishedStatus)) {
      for (const to of JOB_STATUSES.filter(isFinishedStatus)) {
        const job = { status: from };
        moveJob(job, to);
        assert.equal(job.status, to);
      }
    }
  });

  it('walks each sync path to done, and refuses to skip validation or go back', () => {
    const allOrNothing = { phase: 'validating' as SyncPhase };
    for (const to of ['applying', 'deleting', 'done'] as const) moveSync(allOrNothing, to);
    const onePass = { phase: 'loading' as SyncPhase };
    for (const to of ['deleting', 'done'] as const) moveSync(onePass, to);
    assert.throws(() => moveSync({ phase: 'validating' }, 'deleting'), /from validating to deleting/);
    assert.throws(() => moveSync({ phase: 'loading' }, 'applying'), /from loading to applying/);
    assert.throws(() => moveSync({ phase: 'applying' }, 'validating'), /from applying to validating/);
    for (const to of PHASES.filter((p) => p !== 'done')) assert.throws(() => moveSync({ phase: 'done' }, to), /from done/);
    assert.deepEqual(Object.keys(SYNC_TRANSITIONS).sort(), [...PHASES].sort());
  });
});
