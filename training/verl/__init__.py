"""polar envs inside trainers that sample token ids themselves: verl's agent loop (`agent_loop`), the dataset
rows it reads (`data`), the `polar train data|verl` commands (`cli`), and the token-in/token-out episode
driver they and the TRL adapter share (`rollout`). Only `agent_loop` imports verl.
"""
