/**
 * Planning: the engine's face of the planning scheduler, prices for a placement, and storing what the scheduler moved.
 */
export { persistPlanChanges } from './plan-persistence.js';
export { PlanningService } from './planning-service.js';
export type { NodeView, ReplanCause, ReplanSummary } from './planning-service.js';
