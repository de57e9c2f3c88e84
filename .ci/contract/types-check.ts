// Type-checks what openapi-typescript generates from api/openapi.yaml
// (written to bokat.d.ts beside this file by .ci/run): the contract's rules
// must reach the types, so a document change that turns them into
// `unknown` or `Record<string, never>` fails CI.
import type { components } from "./bokat";

type S = components["schemas"];

// Customer: phone and email, and a name or first and last name.
export const byName: S["Customer"] = { name: "Greta Gåsfot", phone: "+46701234567", email: "greta@example.se" };
export const byParts: S["Customer"] = { first_name: "Greta", last_name: "Gåsfot", phone: "+46701234567", email: "greta@example.se" };
// @ts-expect-error a customer without phone
export const noPhone: S["Customer"] = { name: "Greta Gåsfot", email: "greta@example.se" };
// @ts-expect-error a customer without e-mail
export const noEmail: S["Customer"] = { name: "Greta Gåsfot", phone: "+46701234567" };
// @ts-expect-error a customer with neither name nor both name parts
export const noName: S["Customer"] = { first_name: "Greta", phone: "+46701234567", email: "greta@example.se" };

// Timing: one of its two fields.
export const urgent: S["Timing"] = { urgency: "inom två veckor" };
// @ts-expect-error an empty timing
export const noTiming: S["Timing"] = {};

// CreateRequestLocation: input, address or postcode.
export const located: S["CreateRequestLocation"] = { postcode: "113 45" };
// @ts-expect-error an empty location
export const nowhere: S["CreateRequestLocation"] = {};

// Open objects take any field: the moving_home details the contract requires.
export const details: S["SearchRequest"]["details"] = { home_size_sqm: 62, boxes: 30, elevator_origin: true, elevator_destination: false };
export const section: NonNullable<S["BookingOptionTerms"]["sections"]>[number] = { id: "cancellation", text: "Avboka senast 24 h före." };
