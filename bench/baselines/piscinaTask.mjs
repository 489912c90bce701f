// Trivial piscina task: returns its input unchanged.
export default function identity(x) {
  return x;
}
