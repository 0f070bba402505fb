/**
 * Writes the recall benchmark's set (bench/memory-recall-set.json): 200 conversations, each planting one
 * fact among chit-chat, and 100 questions asked later about 100 of those facts, half in the fact's own
 * words and half paraphrased (other words for the same thing: "sibling" for "sister", "automobile" for
 * "car"). Seeded: running it again writes the same file.
 *
 * Run: `node --import tsx bench/memory-recall-set.ts`
 */
import { writeFileSync } from 'node:fs';

let seed = 7;
const random = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

const NAMES = [
  'Alex',
  'Priya',
  'Jonas',
  'Mei',
  'Tomasz',
  'Aisha',
  'Lucas',
  'Sofia',
  'Kenji',
  'Amara',
  'Diego',
  'Freya',
  'Omar',
  'Ines',
  'Ravi',
  'Zoe',
  'Mateo',
  'Hana',
  'Felix',
  'Leila',
  'Noah',
  'Yara',
  'Erik',
  'Chloe',
  'Samir',
  'Anya',
  'Bruno',
  'Lena',
  'Kwame',
  'Elif',
];
const CITIES = [
  'Lisbon',
  'Oslo',
  'Nairobi',
  'Osaka',
  'Lyon',
  'Porto',
  'Krakow',
  'Seville',
  'Tampere',
  'Graz',
  'Bergen',
  'Ghent',
];
const COLOURS = ['red', 'green', 'blue', 'silver', 'black', 'white'];
const BRANDS = ['Volvo', 'Saab', 'Skoda', 'Fiat', 'Mazda', 'Renault'];
const PETS = ['Biscuit', 'Pepper', 'Mochi', 'Rusty', 'Juniper', 'Waffles', 'Ziggy'];
const JOBS = ['nurse', 'architect', 'welder', 'translator', 'pilot', 'chemist'];
const COMPANIES = ['Northwind', 'Acme Tools', 'Blue Harbor', 'Kestrel Labs', 'Orchard Bank'];
const MONTHS = ['March', 'April', 'June', 'August', 'October', 'December'];
const FOODS = ['peanuts', 'shellfish', 'sesame', 'kiwi', 'gluten'];
const DRINKS = ['green tea', 'espresso', 'rooibos', 'oat latte', 'mint tea'];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'];

/** Each template: the fact, the question in its own words, and the paraphrased question. */
const TEMPLATES: Array<(n: string) => { fact: string; direct: string; paraphrase: string }> = [
  (n) => ({
    fact: `${n}'s sister lives in ${pick(CITIES)}.`,
    direct: `Where does ${n}'s sister live?`,
    paraphrase: `Which town is ${n}'s sibling's home?`,
  }),
  (n) => ({
    fact: `${n} drives a ${pick(COLOURS)} ${pick(BRANDS)} car.`,
    direct: `What car does ${n} drive?`,
    paraphrase: `Which automobile does ${n} own?`,
  }),
  (n) => ({
    fact: `${n}'s dog is called ${pick(PETS)}.`,
    direct: `What is ${n}'s dog called?`,
    paraphrase: `What is the name of ${n}'s puppy?`,
  }),
  (n) => ({
    fact: `${n} works as a ${pick(JOBS)} at ${pick(COMPANIES)}.`,
    direct: `Where does ${n} work?`,
    paraphrase: `Who is ${n}'s employer?`,
  }),
  (n) => ({
    fact: `${n}'s birthday is on ${Math.ceil(random() * 28)} ${pick(MONTHS)}.`,
    direct: `When is ${n}'s birthday?`,
    paraphrase: `When was ${n} born?`,
  }),
  (n) => ({
    fact: `${n} is allergic to ${pick(FOODS)}.`,
    direct: `What is ${n} allergic to?`,
    paraphrase: `Does ${n} have an allergy?`,
  }),
  (n) => ({
    fact: `${n}'s favourite drink is ${pick(DRINKS)}.`,
    direct: `What is ${n}'s favourite drink?`,
    paraphrase: `Which beverage does ${n} prefer?`,
  }),
  (n) => ({
    fact: `${n} has a meeting with ${pick(NAMES)} on ${pick(DAYS)}.`,
    direct: `When is ${n}'s meeting?`,
    paraphrase: `When is ${n}'s appointment?`,
  }),
];

const CHATTER = [
  'Asked: can you summarise the article I sent?\nAnswered: It argues that small teams ship faster when they own their deploys.',
  'Asked: what is the weather like?\nAnswered: I cannot see the weather, but I can set a reminder to check.',
  'Asked: draft a polite reply declining the invitation.\nAnswered: Thank you for the kind invitation; sadly I cannot make it this time.',
  'Asked: convert 30 miles to kilometres.\nAnswered: 30 miles is about 48 kilometres.',
  'Asked: list three ideas for a team lunch.\nAnswered: A picnic, a noodle bar, or a cooking class.',
  'Asked: remind me to water the plants tomorrow.\nAnswered: I set a timer for tomorrow morning.',
  'Asked: what does the error ENOENT mean?\nAnswered: A file or folder that was asked for does not exist.',
  'Asked: suggest a title for the quarterly report.\nAnswered: Steady Growth, Clear Priorities.',
];

const conversations = Array.from({ length: 200 }, (_, i) => {
  const planted = pick(TEMPLATES)(pick(NAMES));
  const chatter = Array.from({ length: 2 + Math.floor(random() * 2) }, () => pick(CHATTER));
  return { id: i + 1, fact: planted.fact, chatter, direct: planted.direct, paraphrase: planted.paraphrase };
});
// 100 questions about 100 of the facts, every other one paraphrased.
const asked = [...conversations].sort(() => random() - 0.5).slice(0, 100);
const questions = asked.map((c, i) => ({
  conversation: c.id,
  paraphrase: i % 2 === 1,
  question: i % 2 === 1 ? c.paraphrase : c.direct,
  expects: c.fact,
}));

const set = { conversations: conversations.map(({ id, fact, chatter }) => ({ id, fact, chatter })), questions };
writeFileSync(new URL('./memory-recall-set.json', import.meta.url), `${JSON.stringify(set, null, 1)}\n`);
console.log(`${conversations.length} conversations, ${questions.length} questions`);
