// Brand voices and image presets: style records of one project, referenced by articles of
// that project only.
import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { brandVoices, imagePresets } from "../db/schema.ts";
import { notFound, throwIfAny } from "../../../kit/src/errors.ts";

export type BrandVoiceRecord = typeof brandVoices.$inferSelect;
export type ImagePresetRecord = typeof imagePresets.$inferSelect;

function checkStyle(projectId: number, name: string, text: [field: string, value: string, max: number]): void {
  const errors: Record<string, string[]> = {};
  if (!(projectId > 0)) errors.project_id = ["project_id is required."];
  if (name.trim() === "" || name.length > 255) errors.name = ["name must be 1 to 255 characters."];
  const [field, value, max] = text;
  if (value.trim() === "" || value.length > max) errors[field] = [`${field} must be 1 to ${max} characters.`];
  throwIfAny(errors);
}

export async function createBrandVoice(db: Db, projectId: number, name: string, description: string): Promise<BrandVoiceRecord> {
  checkStyle(projectId, name, ["description", description, 5000]);
  const [voice] = await db.insert(brandVoices).values({ projectId, name: name.trim(), description: description.trim() }).returning();
  return voice;
}

export async function getBrandVoice(db: Db, id: number): Promise<BrandVoiceRecord> {
  const [voice] = id > 0 && Number.isSafeInteger(id) ? await db.select().from(brandVoices).where(eq(brandVoices.id, id)) : [];
  if (!voice) throw notFound("No such brand voice.");
  return voice;
}

export async function createImagePreset(db: Db, projectId: number, name: string, style: string): Promise<ImagePresetRecord> {
  checkStyle(projectId, name, ["style", style, 2000]);
  const [preset] = await db.insert(imagePresets).values({ projectId, name: name.trim(), style: style.trim() }).returning();
  return preset;
}

export async function getImagePreset(db: Db, id: number): Promise<ImagePresetRecord> {
  const [preset] = id > 0 && Number.isSafeInteger(id) ? await db.select().from(imagePresets).where(eq(imagePresets.id, id)) : [];
  if (!preset) throw notFound("No such image preset.");
  return preset;
}
