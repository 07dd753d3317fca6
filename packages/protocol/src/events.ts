/**
 * The event catalogue: exactly six event types (design R7).
 */
export const EVENT_NAMES = [
  'click',
  'conversion',
  'link.created',
  'link.updated',
  'link.deleted',
  'alert.triggered',
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

const eventNameSet: ReadonlySet<string> = new Set(EVENT_NAMES);

/**
 * Whether `name` is one of the six catalogued event names.
 *
 * @example
 * isEventName('click'); // true
 * isEventName('click.created'); // false
 */
export function isEventName(name: unknown): name is EventName {
  return typeof name === 'string' && eventNameSet.has(name);
}

/** One line per event, for catalogues and docs: when it is sent (design R7). */
export const EVENT_DESCRIPTIONS: Readonly<Record<EventName, string>> = {
  click: 'A visitor clicks a smart link.',
  conversion: 'A conversion postback is received for a click.',
  'link.created': 'A new smart link is created.',
  'link.updated': "A smart link's settings or rules are modified.",
  'link.deleted': 'A smart link is deleted.',
  'alert.triggered': 'An alert rule condition is met (for example a click spike).',
};
