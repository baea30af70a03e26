import type { ChatFeedbackVerdict, OperatorAction, OperatorState } from "./kind.ts";

// What every chat provider's card offers, whatever it looks like there: the buttons of each state (what the
// operator state machine allows from it) and their labels. Providers only render them.

export const CARD_BUTTONS: Record<OperatorState, OperatorAction[]> = {
  open: ["acknowledge", "resolve", "snooze", "mute"],
  acknowledged: ["resolve", "snooze", "mute"],
  snoozed: ["acknowledge", "resolve", "reopen", "mute"],
  resolved: ["reopen"],
};
export const BUTTON_TEXT: Record<OperatorAction, string> = { acknowledge: "Acknowledge", resolve: "Resolve", snooze: "Snooze 1 h", reopen: "Reopen", mute: "Mute topic 24 h" };
/** The Snooze button's minutes (its label says 1 h). */
export const SNOOZE_BUTTON_MINUTES = 60;
/** Feedback on the card's trend, in every state. */
export const FEEDBACK_BUTTONS: { verdict: ChatFeedbackVerdict; text: string }[] = [
  { verdict: "not_a_trend", text: "Not a trend" },
  { verdict: "useful", text: "Useful" },
];
/** The approve button of an ads-approval card. */
export const APPROVE_TEXT = "Approve and apply";
