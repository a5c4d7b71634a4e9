"""The features around the compiler: the drift guard, card diffs, safe
discovery, serving, importing and migrating cards, and writing skeletons.
Each reads what the compiler produced; none is part of compiling."""
