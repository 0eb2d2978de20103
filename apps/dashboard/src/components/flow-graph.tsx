"use client";
import type { KeyboardEvent } from "react";
import type { Tone } from "./badge";
import { layoutFlow, STEP_HEIGHT, STEP_WIDTH } from "./flow-layout";

/** A step as drawn: its name, state (a job state, or `waiting`), the steps it runs after. */
export interface FlowGraphStep {
  name: string;
  state: string;
  after: readonly string[];
  task: string;
}

/** Beyond this many steps the graph is not drawn (the steps table lists them all). */
export const MAX_DRAWN_STEPS = 200;

/** The colour of a step's or a flow's state; the state is always written beside it, never told by colour alone. */
export function stateTone(state: string): Tone {
  if (state === "completed") return "ok";
  if (state === "dead" || state === "failed") return "bad";
  if (state === "running") return "info";
  if (state === "waiting" || state === "ready") return "warn";
  return "neutral";
}

/**
 * A flow drawn as its graph: steps as boxes coloured by state with the state written in each, edges by `after`,
 * laid out by depth (flow-layout.ts). Each box is a button: click it, or Tab to it and press Enter, to open the
 * step's job.
 */
export function FlowGraph({ label, steps, onOpen }: { label: string; steps: FlowGraphStep[]; onOpen: (name: string) => void }) {
  const layout = layoutFlow(steps);
  const byName = new Map(steps.map((s) => [s.name, s]));
  const keyed = (name: string) => (event: KeyboardEvent) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      onOpen(name);
    }
  };
  return (
    <div className="flow-graph">
      <svg role="group" aria-label={label} width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`}>
        <defs>
          <marker id="flow-arrow" viewBox="0 0 10 10" refX="4" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" className="flow-edge-head" />
          </marker>
          {/* A long step name is cut at the box's edge (each box's own coordinates). */}
          <clipPath id="flow-step-clip" clipPathUnits="userSpaceOnUse">
            <rect width={STEP_WIDTH - 8} height={STEP_HEIGHT} />
          </clipPath>
        </defs>
        {layout.edges.map((edge) => (
          <path key={`${edge.from}>${edge.to}`} d={edge.path} className="flow-edge" markerEnd="url(#flow-arrow)" data-edge={`${edge.from}>${edge.to}`} />
        ))}
        {layout.steps.map((placed) => {
          const step = byName.get(placed.name)!;
          return (
            <g
              key={placed.name}
              role="button"
              tabIndex={0}
              // Starts with the words the box shows (name, state), so what is read out matches what is seen.
              aria-label={`${placed.name} ${step.state}${step.after.length ? `, after ${step.after.join(", ")}` : ""}: open its job`}
              className={`flow-step flow-step-${stateTone(step.state)}`}
              data-step={placed.name}
              data-state={step.state}
              transform={`translate(${placed.x} ${placed.y})`}
              onClick={() => onOpen(placed.name)}
              onKeyDown={keyed(placed.name)}
            >
              <rect width={STEP_WIDTH} height={STEP_HEIGHT} rx={6} />
              {/* One text, the two lines apart by a space: read (and matched with the label) as "ship dead". */}
              <text clipPath="url(#flow-step-clip)">
                <tspan x={10} y={21} className="flow-step-name">
                  {placed.name}
                </tspan>{" "}
                <tspan x={10} y={40}>
                  {step.state}
                </tspan>
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
