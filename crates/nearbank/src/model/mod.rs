//! What a program costs on the GPU + near-bank PIM systems of Anaheim's Table III.
